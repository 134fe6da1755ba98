// SPDX-License-Identifier: Apache-2.0
// File access beneath a directory handle that follows no symlink anywhere on the way
// (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS). A root daemon
// that works in directories other users can write to (trace directories handed to a job's user,
// a container's root) must never resolve a path that such a user could have redirected: every
// open, mkdir and stat here is relative to a handle the caller already trusts, and a file is
// used only when it is a regular file owned by the expected user. Linux 5.6 or later.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

// Opens `relative` beneath `dirfd` (no absolute paths, no "..", no symlinks, no magic links).
// `in_root` resolves as if `dirfd` were the root directory (RESOLVE_IN_ROOT: absolute paths and
// ".." stay inside), for paths as a process in another mount namespace sees them through
// /proc/PID/root. PermissionDenied for a symlink or an escape, NotFound when missing.
StatusOr<ScopedFd> OpenBeneath(int dirfd, std::string_view relative, int flags,
                               bool in_root = false);

// Opens a directory by an absolute path that the administrator configured (O_PATH handle,
// symlinks in it are resolved once, here, and never again).
StatusOr<ScopedFd> OpenDirHandle(const std::string& path);

// Creates directory `name` (one component) in `dirfd` with `mode` and, when `owner_uid` >= 0 and
// differs from the caller's, hands it to that user (fchown on the new directory's own handle, so
// no path is followed). AlreadyExists when anything is at `name`: nobody else can have planted
// it only if `dirfd` is writable by the caller alone, which callers check.
Status MakeOwnedDirBeneath(int dirfd, std::string_view name, mode_t mode, int owner_uid);

// A file the daemon reads on behalf of a user: where it is and who must own it.
struct FileBeneath {
  std::shared_ptr<const ScopedFd> dir;  // Trusted handle; null: open dir_path.
  std::string dir_path;                 // For messages, and to open when `dir` is null.
  std::string relative;                 // Beneath the directory (or inside it, with in_root).
  bool in_root = false;
  int owner_uid = -1;  // -1: the caller's own uid.

  bool empty() const { return relative.empty(); }
  std::string DisplayPath() const;
};

// Opens a FileBeneath read-only (O_NOFOLLOW, O_NONBLOCK so a FIFO cannot stall the caller) and
// checks that it is a regular file owned by owner_uid. `*st` receives its fstat on success.
// FailedPrecondition for a file of the wrong kind or owner: callers report nothing about it.
StatusOr<ScopedFd> OpenOwnedRegularFile(const FileBeneath& file, struct stat* st);

// Reads an open file from its start, capped at max_bytes (DataLoss beyond).
StatusOr<std::string> ReadFdCapped(int fd, size_t max_bytes, std::string_view what);

}  // namespace vigil
