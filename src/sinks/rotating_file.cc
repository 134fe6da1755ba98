// SPDX-License-Identifier: Apache-2.0
#include "sinks/rotating_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace vigil {

RotatingFile::RotatingFile(std::string path, size_t max_bytes, int keep_files)
    : path_(std::move(path)), max_bytes_(max_bytes), keep_files_(keep_files < 0 ? 0 : keep_files) {}

Status RotatingFile::Open() {
  const size_t slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    VIGIL_RETURN_IF_ERROR(MakeDirs(path_.substr(0, slash)));
  }
  int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return ErrnoStatus(errno, "open " + path_);
  }
  fd_.Reset(fd);
  struct stat st {};
  size_ = fstat(fd, &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
  return OkStatus();
}

Status RotatingFile::Rotate() {
  fd_.Reset();
  if (keep_files_ == 0) {
    if (unlink(path_.c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "unlink " + path_);
    }
  } else {
    for (int i = keep_files_ - 1; i >= 1; --i) {
      const std::string from = path_ + "." + std::to_string(i);
      const std::string to = path_ + "." + std::to_string(i + 1);
      if (rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT) {
        return ErrnoStatus(errno, "rename " + from);
      }
    }
    const std::string first = path_ + ".1";
    if (rename(path_.c_str(), first.c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "rename " + path_);
    }
  }
  return Open();
}

Status RotatingFile::Write(std::string_view data) {
  if (!fd_.valid()) {
    VIGIL_RETURN_IF_ERROR(Open());
  }
  if (max_bytes_ > 0 && size_ > 0 && size_ + data.size() > max_bytes_) {
    VIGIL_RETURN_IF_ERROR(Rotate());
  }
  while (!data.empty()) {
    const ssize_t n = write(fd_.get(), data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, "write " + path_);
    }
    data.remove_prefix(static_cast<size_t>(n));
    size_ += static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace vigil
