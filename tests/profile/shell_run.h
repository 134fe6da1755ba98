// SPDX-License-Identifier: Apache-2.0
// Test helper: run a command line through the shell, capturing stdout and stderr together, as
// the CLI tests run the built `vigil`.
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <string>

namespace vigil::testing {

struct ShellRun {
  int rc = -1;  // exit status, -1 when killed by a signal or not started
  std::string out;
};

inline ShellRun Shell(const std::string& command) {
  ShellRun run;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return run;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) run.out.append(buf.data(), n);
  const int status = pclose(p);
  run.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace vigil::testing
