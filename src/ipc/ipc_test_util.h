// SPDX-License-Identifier: Apache-2.0
// Test helpers for the ipc module: a temporary directory tree, a settable clock, a fake
// /proc/<pid>/status writer, and a way to act as another local user (uid 65534). Test-only; not
// part of the library. Not thread-safe.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

constexpr int kNobody = 65534;

// The permission bits of `path` itself (a link is not followed).
inline mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// Runs `fn` in a forked child that became uid and gid 65534 (needs root); returns its exit code
// (`fn`'s return value), 100 when the child could not change user, -1 when it died.
template <typename Fn>
int AsNobody(Fn fn) {
  const pid_t child = fork();
  if (child == 0) {
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0) {
      _exit(100);
    }
    _exit(fn());
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace vigil::testing_util
