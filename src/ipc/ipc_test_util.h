// SPDX-License-Identifier: Apache-2.0
// Test helpers for the ipc module: a temporary directory tree, a settable clock, and a fake
// /proc/<pid>/status writer. Test-only; not part of the library. Not thread-safe.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "base/file_util.h"

namespace vigil::testing_util {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/vigil-ipc-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct FakeClock {
  std::atomic<int64_t> now{1'000'000'000};
  std::function<int64_t()> Fn() {
    return [this] { return now.load(); };
  }
  void Advance(int64_t ns) { now += ns; }
};

inline void WriteProcStatus(const std::string& proc_root, int host_pid, const std::string& nspid,
                            int ppid) {
  const std::string dir = fmt::format("{}/{}", proc_root, host_pid);
  (void)MakeDirs(dir);
  (void)WriteFileAtomic(
      dir + "/status",
      fmt::format("Name:\tpython\nPid:\t{}\nPPid:\t{}\nNSpid:\t{}\n", host_pid, ppid, nspid));
}

}  // namespace vigil::testing_util
