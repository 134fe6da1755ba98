// SPDX-License-Identifier: Apache-2.0
#include "base/file_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace vigil {

void ScopedFd::Reset(int fd) {
  if (fd_ >= 0) {
    close(fd_);
  }
  fd_ = fd;
}

Status ReadFileInto(const std::string& path, std::string* out, size_t max_bytes) {
  out->clear();
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  size_t chunk = 4096;
  while (true) {
    const size_t old = out->size();
    if (old >= max_bytes + 1) {
      return DataLossError("read " + path + ": file larger than " + std::to_string(max_bytes) +
                           " bytes");
    }
    out->resize(old + chunk);
    ssize_t n = read(fd.get(), out->data() + old, chunk);
    if (n < 0) {
      if (errno == EINTR) {
        out->resize(old);
        continue;
      }
      int err = errno;
      out->clear();
      return ErrnoStatus(err, "read " + path);
    }
    out->resize(old + static_cast<size_t>(n));
    if (n == 0) {
      break;
    }
    if (chunk < (1 << 20)) {
      chunk *= 2;
    }
  }
  if (out->size() > max_bytes) {
    return DataLossError("read " + path + ": file larger than " + std::to_string(max_bytes) +
                         " bytes");
  }
  return OkStatus();
}

StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  std::string out;
  VIGIL_RETURN_IF_ERROR(ReadFileInto(path, &out, max_bytes));
  return out;
}

namespace {

// The names in `path` but "." and "..", those `keep` (given the entry) accepts.
template <typename Keep>
StatusOr<std::vector<std::string>> ListDirWhere(const std::string& path, Keep keep) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    return ErrnoStatus(errno, "opendir " + path);
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): dir is ours alone.
    std::string_view name(entry->d_name);
    if (name != "." && name != ".." && keep(*entry, name)) {
      names.emplace_back(name);
    }
  }
  closedir(dir);
  return names;
}

}  // namespace

StatusOr<std::vector<std::string>> ListDir(const std::string& path) {
  return ListDirWhere(path, [](const dirent&, std::string_view) { return true; });
}

StatusOr<std::vector<std::string>> ListSubdirectories(const std::string& path) {
  return ListDirWhere(path, [&path](const dirent& entry, std::string_view name) {
    // Symlinks and file systems that leave the type out are asked the way IsDirectory asks.
    return entry.d_type == DT_DIR || ((entry.d_type == DT_LNK || entry.d_type == DT_UNKNOWN) &&
                                      IsDirectory(JoinPath(path, std::string(name))));
  });
}

bool PathExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status WriteFileAtomic(const std::string& path, std::string_view contents, int mode) {
  const std::string tmp = path + ".tmp";
  ScopedFd fd(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + tmp);
  }
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd.get(), contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      int err = errno;
      unlink(tmp.c_str());
      return ErrnoStatus(err, "write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  fd.Reset();
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return ErrnoStatus(err, "rename " + tmp);
  }
  return OkStatus();
}

Status MakeDirs(const std::string& path, int mode) {
  if (path.empty()) {
    return OkStatus();
  }
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) {
      continue;
    }
    if (mkdir(partial.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "mkdir " + partial);
    }
  }
  if (!IsDirectory(path)) {
    return FailedPreconditionError("mkdir " + path + ": exists and is not a directory");
  }
  return OkStatus();
}

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  while (!out.empty() && out.back() == '/') {
    out.pop_back();
  }
  while (!b.empty() && b.front() == '/') {
    b.remove_prefix(1);
  }
  out += '/';
  out += b;
  return out;
}

}  // namespace vigil
