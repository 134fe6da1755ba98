// SPDX-License-Identifier: Apache-2.0
// File access for collectors and tools: RAII fds, bounded reads of small (/proc, /sys) files into a
// reusable buffer, directory listing, atomic writes. Every read is capped: a file larger than the
// cap is DataLoss, never an unbounded allocation. Missing files are NotFound (see IsAbsent).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace vigil {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { Reset(); }
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      Reset(other.Release());
    }
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

inline constexpr size_t kDefaultMaxFileBytes = 16 << 20;

// Reads a whole file (procfs and sysfs files report size 0, so this reads until EOF).
StatusOr<std::string> ReadSmallFile(const std::string& path,
                                    size_t max_bytes = kDefaultMaxFileBytes);
// Same, into `*out` (its capacity is reused across calls: no allocation on a hot path).
Status ReadFileInto(const std::string& path, std::string* out,
                    size_t max_bytes = kDefaultMaxFileBytes);
// Names in a directory, without "." and "..", unsorted.
StatusOr<std::vector<std::string>> ListDir(const std::string& path);
// The names in it that are directories (or symlinks to one), as IsDirectory says, unsorted; from
// the entries' types, so a directory of N entries costs no N stat calls (cgroupfs, sysfs).
StatusOr<std::vector<std::string>> ListSubdirectories(const std::string& path);
bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);
// Writes to path.tmp then renames, so readers never see a partial file.
Status WriteFileAtomic(const std::string& path, std::string_view contents, int mode = 0644);
// mkdir -p.
Status MakeDirs(const std::string& path, int mode = 0755);
// Joins two path pieces with exactly one '/'.
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace vigil
