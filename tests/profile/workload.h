// SPDX-License-Identifier: Apache-2.0
// A test workload process: started with fork/exec (optionally inside a fresh mount namespace
// where a tmpfs holds a copy of the binary, so only that namespace can see it), ready once it
// prints "ready" (awaited with a deadline), killed and reaped on destruction.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace vigil::testing {

struct WorkloadOptions {
  // Copy argv[0] into a tmpfs mounted at `private_dir` in a new mount namespace and run it from
  // there (root only).
  std::string private_dir;
  std::vector<std::string> env;  // Extra NAME=value entries.
};

class Workload {
 public:
  Workload(std::vector<std::string> argv, WorkloadOptions options = {});
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // True once the process printed "ready" within `timeout_s`.
  bool WaitReady(double timeout_s = 30);
  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string output_;
};

}  // namespace vigil::testing
