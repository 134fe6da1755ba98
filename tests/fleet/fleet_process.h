// SPDX-License-Identifier: Apache-2.0
// Test helpers: start the built vigil-fleet on a free loopback port with its ledger in a temp
// directory, wait for /healthz with a deadline, kill it, and run a command capturing stdout.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace vigil::fleet_test {

// A loopback TCP port nothing listens on right now.
int FreePort();

class FleetProcess {
 public:
  FleetProcess(std::string db, int port, std::vector<std::string> extra = {});
  ~FleetProcess();
  // Starts the service and waits (at most 20 s) until /healthz answers.
  bool Start();
  void Kill();  // SIGKILL: no clean shutdown.
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  std::string db_;
  int port_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
};

// Runs argv, returns its exit code; stdout goes to *out.
int RunCapture(const std::vector<std::string>& argv, std::string* out);

}  // namespace vigil::fleet_test
