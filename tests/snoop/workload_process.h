// SPDX-License-Identifier: Apache-2.0
// Runs snoop_workload as a child the test talks to over stdin/stdout ("ready PID", "run",
// "done", "exit"), optionally in its own mount namespace with the fake libraries copied into a
// private tmpfs, so the paths it maps do not exist in the test's namespace. Every read has a
// deadline; the destructor ends the child (exit, then SIGKILL after a deadline).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace vigil::snoop::testing {

struct WorkloadOptions {
  std::string path;               // The workload executable.
  std::vector<std::string> args;  // After argv[0].
  std::vector<std::string> env;   // "NAME=value", added to the environment.
  // Non-empty: unshare(CLONE_NEWNS) in the child, mount a tmpfs on this (existing, empty)
  // directory, copy `private_libs` into it and run with LD_LIBRARY_PATH pointing there.
  std::string private_dir;
  std::vector<std::string> private_libs;
};

class WorkloadProcess {
 public:
  static StatusOr<WorkloadProcess*> Start(const WorkloadOptions& options);  // Owned by caller.
  ~WorkloadProcess();

  int pid() const { return pid_; }
  Status Send(const std::string& line);
  // Next line from the child's stdout (without '\n').
  StatusOr<std::string> ReadLine(double timeout_s = 30);
  // Sends `command`, then waits for "done"; the lines before it go to `output`.
  Status Do(const std::string& command, double timeout_s = 60, std::string* output = nullptr);
  // Sends "exit" and reaps the child; its exit status (or -1 on timeout).
  int Exit(double timeout_s = 30);

 private:
  WorkloadProcess() = default;
  int pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool reaped_ = false;
  std::string buffered_;
};

// Reaps child `pid` within `timeout_s`; its wait status, or -1 on timeout.
int WaitChild(int pid, double timeout_s);

}  // namespace vigil::snoop::testing
