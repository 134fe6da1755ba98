// SPDX-License-Identifier: Apache-2.0
#include "base/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include <fmt/format.h>

namespace vigil {
namespace {

constexpr int kRaceRetries = 8;  // openat2 answers EAGAIN when a rename races the lookup.

Status OpenErrorStatus(int err, std::string_view what) {
  switch (err) {
    case ELOOP:
      return PermissionDeniedError(fmt::format("{}: a symlink is on the way (refused)", what));
    case EXDEV:
      return PermissionDeniedError(
          fmt::format("{}: the path leaves its directory (refused)", what));
    case ENOSYS:
      return UnimplementedError(fmt::format("{}: the kernel has no openat2 (Linux 5.6+)", what));
    default:
      return ErrnoStatus(err, what);
  }
}

}  // namespace

StatusOr<ScopedFd> OpenBeneath(int dirfd, std::string_view relative, int flags, bool in_root) {
  std::string path(relative);
  if (!in_root) {
    while (!path.empty() && path.front() == '/') {
      path.erase(0, 1);
    }
  }
  if (path.empty()) {
    path = ".";
  }
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.resolve =
      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH);
  for (int attempt = 0;; ++attempt) {
    const long fd = syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof(how));
    if (fd >= 0) {
      return ScopedFd(static_cast<int>(fd));
    }
    if ((errno == EAGAIN || errno == EINTR) && attempt < kRaceRetries) {
      continue;
    }
    return OpenErrorStatus(errno, "open " + path);
  }
}

StatusOr<ScopedFd> OpenDirHandle(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open directory " + path);
  }
  return fd;
}

Status MakeOwnedDirBeneath(int dirfd, std::string_view name, mode_t mode, int owner_uid) {
  const std::string leaf(name);
  if (leaf.empty() || leaf == "." || leaf == ".." || leaf.find('/') != std::string::npos) {
    return InvalidArgumentError("directory name must be one path component: " + leaf);
  }
  if (mkdirat(dirfd, leaf.c_str(), mode) != 0) {
    if (errno == EEXIST) {
      return AlreadyExistsError(leaf + " already exists");
    }
    return ErrnoStatus(errno, "mkdir " + leaf);
  }
  VIGIL_ASSIGN_OR_RETURN(ScopedFd dir, OpenBeneath(dirfd, leaf, O_RDONLY | O_DIRECTORY));
  // The exact mode whatever the umask; set before the owner changes, while it is still ours.
  if (fchmod(dir.get(), mode) != 0) {
    return ErrnoStatus(errno, "chmod " + leaf);
  }
  if (owner_uid >= 0 && static_cast<uid_t>(owner_uid) != geteuid() &&
      fchown(dir.get(), static_cast<uid_t>(owner_uid), static_cast<gid_t>(-1)) != 0) {
    const int err = errno;
    unlinkat(dirfd, leaf.c_str(), AT_REMOVEDIR);
    return ErrnoStatus(err, fmt::format("hand {} to uid {}", leaf, owner_uid));
  }
  return OkStatus();
}

std::string FileBeneath::DisplayPath() const {
  if (in_root) {
    return dir_path + (relative.starts_with('/') ? "" : "/") + relative;
  }
  return JoinPath(dir_path, relative);
}

StatusOr<ScopedFd> OpenOwnedRegularFile(const FileBeneath& file, struct stat* st) {
  ScopedFd opened_dir;
  int dirfd = file.dir ? file.dir->get() : -1;
  if (dirfd < 0) {
    VIGIL_ASSIGN_OR_RETURN(opened_dir, OpenDirHandle(file.dir_path));
    dirfd = opened_dir.get();
  }
  // An O_PATH handle first: nothing is opened for reading (a device, a FIFO) before its kind and
  // owner are known.
  VIGIL_ASSIGN_OR_RETURN(ScopedFd handle, OpenBeneath(dirfd, file.relative, O_PATH, file.in_root));
  struct stat info {};
  if (fstat(handle.get(), &info) != 0) {
    return ErrnoStatus(errno, "stat " + file.DisplayPath());
  }
  const uid_t expected =
      file.owner_uid >= 0 ? static_cast<uid_t>(file.owner_uid) : static_cast<uid_t>(geteuid());
  if (!S_ISREG(info.st_mode)) {
    return FailedPreconditionError(file.DisplayPath() + " is not a regular file (refused)");
  }
  if (info.st_uid != expected) {
    return FailedPreconditionError(fmt::format("{} is owned by uid {}, not {} (refused)",
                                               file.DisplayPath(), info.st_uid, expected));
  }
  const std::string self = fmt::format("/proc/self/fd/{}", handle.get());
  ScopedFd readable(open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!readable.valid()) {
    return ErrnoStatus(errno, "open " + file.DisplayPath());
  }
  if (st != nullptr) {
    *st = info;
  }
  return readable;
}

StatusOr<std::string> ReadFdCapped(int fd, size_t max_bytes, std::string_view what) {
  std::string out;
  size_t chunk = 64 << 10;
  while (true) {
    if (out.size() > max_bytes) {
      return DataLossError(fmt::format("read {}: larger than {} bytes", what, max_bytes));
    }
    const size_t old = out.size();
    out.resize(old + chunk);
    const ssize_t n = pread(fd, out.data() + old, chunk, static_cast<off_t>(old));
    if (n < 0) {
      out.resize(old);
      if (errno == EINTR) {
        continue;
      }
      return ErrnoStatus(errno, fmt::format("read {}", what));
    }
    out.resize(old + static_cast<size_t>(n));
    if (n == 0) {
      return out;
    }
    if (chunk < (8 << 20)) {
      chunk *= 2;
    }
  }
}

}  // namespace vigil
