// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_root.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/strings.h"

namespace vigil {
namespace {

bool TrustedOwner(const struct stat& st) { return st.st_uid == 0 || st.st_uid == geteuid(); }

// An ancestor nobody else can swap: ours or root's, and writable by others only when sticky
// (then they cannot rename or remove what root or we put there).
Status CheckAncestor(const struct stat& st, const std::string& path) {
  if (!TrustedOwner(st)) {
    return FailedPreconditionError(fmt::format(
        "{} is owned by uid {}: that user could replace the trace root", path, st.st_uid));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return FailedPreconditionError(
        fmt::format("{} (mode {:04o}) is writable by other users and not sticky: they could "
                    "replace the trace root",
                    path, st.st_mode & 07777));
  }
  return OkStatus();
}

StatusOr<std::vector<std::string>> Components(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return InvalidArgumentError("trace root must be an absolute path, got '" + path + "'");
  }
  std::vector<std::string> out;
  for (std::string_view piece : Split(path, '/')) {
    if (piece.empty()) {
      continue;
    }
    if (piece == "." || piece == "..") {
      return InvalidArgumentError("trace root must not contain '.' or '..': " + path);
    }
    out.emplace_back(piece);
  }
  if (out.empty()) {
    return InvalidArgumentError("trace root must not be /");
  }
  return out;
}

// Opens one component below `dir` without following a symlink, creating it (0755) when absent.
StatusOr<ScopedFd> OpenOrMakeComponent(int dir, const std::string& name, const std::string& path,
                                       bool* created) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    ScopedFd fd(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.valid()) {
      return fd;
    }
    if (errno == ELOOP || errno == ENOTDIR) {
      return FailedPreconditionError(
          fmt::format("{} is a symlink or not a directory: give the trace root as a path of real "
                      "directories",
                      path));
    }
    if (errno != ENOENT) {
      return ErrnoStatus(errno, "open " + path);
    }
    if (mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "mkdir " + path);
    }
    *created = true;
  }
  return UnavailableError("open " + path + ": it keeps changing");
}

}  // namespace

TraceRoot::TraceRoot(std::string path, ScopedFd handle)
    : path_(std::move(path)), handle_(std::make_shared<const ScopedFd>(std::move(handle))) {}

StatusOr<TraceRoot> TraceRoot::Open(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> parts, Components(path));
  ScopedFd dir(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    return ErrnoStatus(errno, "open /");
  }
  std::string walked;
  bool created = false;
  for (const std::string& part : parts) {
    struct stat st {};
    if (fstat(dir.get(), &st) != 0) {
      return ErrnoStatus(errno, "stat " + (walked.empty() ? "/" : walked));
    }
    VIGIL_RETURN_IF_ERROR(CheckAncestor(st, walked.empty() ? "/" : walked));
    walked += "/" + part;
    created = false;
    VIGIL_ASSIGN_OR_RETURN(dir, OpenOrMakeComponent(dir.get(), part, walked, &created));
    if (created && fchmod(dir.get(), 0755) != 0) {  // Whatever the umask: jobs must reach it.
      return ErrnoStatus(errno, "chmod " + walked);
    }
  }
  struct stat st {};
  if (fstat(dir.get(), &st) != 0) {
    return ErrnoStatus(errno, "stat " + walked);
  }
  if (!TrustedOwner(st) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return FailedPreconditionError(fmt::format(
        "trace root {} (owner uid {}, mode {:04o}) must be owned by root or the daemon's user "
        "and writable by nobody else; remove it (an older vigild made it mode 1777) or pass "
        "--trace-root DIR",
        walked, st.st_uid, st.st_mode & 07777));
  }
  return TraceRoot(std::move(walked), std::move(dir));
}

Status TraceRoot::MakeDir(std::string_view parent, std::string_view name, int owner_uid) const {
  ScopedFd parent_fd;
  int dirfd = handle_->get();
  if (!parent.empty()) {
    VIGIL_ASSIGN_OR_RETURN(parent_fd, OpenBeneath(dirfd, parent, O_PATH | O_DIRECTORY));
    dirfd = parent_fd.get();
  }
  return MakeOwnedDirBeneath(dirfd, name, owner_uid >= 0 ? 0700 : 0755, owner_uid)
      .WithContext("trace directory under " + path_);
}

FileBeneath TraceRoot::Locate(std::string_view path, int owner_uid) const {
  FileBeneath file;
  file.dir = handle_;
  file.dir_path = path_;
  file.owner_uid = owner_uid;
  if (path.starts_with(path_ + "/")) {
    file.relative = std::string(path.substr(path_.size() + 1));
  }
  return file;
}

}  // namespace vigil
