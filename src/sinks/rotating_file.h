// SPDX-License-Identifier: Apache-2.0
// An append-only file that rotates by size: when a write would take `path` past `max_bytes`,
// path.N-1 -> path.N, ..., path -> path.1, and a new `path` is started; at most `keep_files`
// rotated files are kept. Used by the JSON-lines sink. Not thread-safe: one owner thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

class RotatingFile {
 public:
  RotatingFile(std::string path, size_t max_bytes, int keep_files);

  // Opens (appending to) the file; creates the parent directory.
  Status Open();
  // Appends `data` (whole lines: a line is never split across files).
  Status Write(std::string_view data);
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  Status Rotate();

  std::string path_;
  size_t max_bytes_;
  int keep_files_;
  ScopedFd fd_;
  size_t size_ = 0;
};

}  // namespace vigil
