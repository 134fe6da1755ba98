// SPDX-License-Identifier: Apache-2.0
// Test harness for the remote-write integration tests: starts a real receiver (Debian's
// prometheus or victoria-metrics) as a child process on a free loopback port with its data in a
// temporary directory, waits for its readiness endpoint with a deadline, stops and restarts it on
// the same port and data (to simulate an outage), and queries its HTTP API.
// One instance per test; not thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace vigil::testing {

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();
// The absolute path of `name` on $PATH, or "" when it is not installed.
std::string FindOnPath(const std::string& name);

struct HttpReply {
  int status = 0;  // 0 = no answer.
  std::string body;
};
// `authorization`: an Authorization header value to send ("" = none).
HttpReply HttpGet(int port, const std::string& path_and_query,
                  const std::string& authorization = "");
std::string UrlEncode(const std::string& text);

class ServerProcess {
 public:
  // `args` is the full command line (args[0] an absolute path); `ready_path` answers 200 once the
  // server takes requests. Output goes to `log_path`.
  ServerProcess(std::vector<std::string> args, int port, std::string ready_path,
                std::string log_path);
  ~ServerProcess();  // Kills a server still running.
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the process and polls `ready_path` until 200, exit, or `timeout_s`.
  bool Start(double timeout_s = 20);
  // SIGTERM, then SIGKILL after `timeout_s`; waits for the exit.
  void Stop(double timeout_s = 10);
  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  std::string Log() const;

 private:
  std::vector<std::string> args_;
  int port_;
  std::string ready_path_;
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace vigil::testing
