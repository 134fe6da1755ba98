// SPDX-License-Identifier: Apache-2.0
// Runs a built Vigil program (VIGIL_BIN_DIR/vigil by default) with arguments through the shell and
// collects its exit code, stdout and stderr, for the CLI's end-to-end tests. Each test passes its
// own temporary directory (for stderr), so tests run in parallel.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/file_util.h"

namespace vigil::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A fresh private directory under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    char dir[] = "/tmp/vigil-cli-XXXXXX";
    if (::mkdtemp(dir) != nullptr) path_ = dir;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `program args` in `dir` (program: a name in VIGIL_BIN_DIR, or a path).
inline RunResult RunProgram(const std::string& dir, const std::string& args,
                            const std::string& program = "vigil") {
  const std::string err_path = dir + "/stderr";
  const std::string binary =
      program.find('/') == std::string::npos ? std::string(VIGIL_BIN_DIR) + "/" + program : program;
  const std::string cmd = binary + " " + args + " 2>" + err_path;
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadSmallFile(err_path).value_or("");
  return r;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace vigil::testing
