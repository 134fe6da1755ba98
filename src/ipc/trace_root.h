// SPDX-License-Identifier: Apache-2.0
// The trace root: the one directory under which the daemon lets traced processes write. The
// daemon creates it itself (mode 0755, owned by root or the daemon's user) and refuses one that
// another user owns or can write, or that sits under a directory another user could swap (every
// ancestor must be owned by root or the daemon's user and be writable by nobody else unless it
// is sticky, as /tmp is). Each trace gets a fresh directory made beneath an O_PATH handle of the
// root (openat2, no symlinks) and handed to the traced process's user, mode 0700, so only that
// user and root can read or write there; nothing is ever chmod'ed or followed through a path.
// Owner: ipc. Thread-compatible (the trace service holds its lock around it).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/beneath.h"
#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

class TraceRoot {
 public:
  // Opens `path` (absolute), creating it (and missing ancestors, 0755) when absent, and checks it
  // as above. FailedPrecondition, with what to do, for a root or ancestor that fails the checks.
  static StatusOr<TraceRoot> Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::shared_ptr<const ScopedFd>& handle() const { return handle_; }

  // Creates `<root>/<parent>/<name>` (parent "" for a directory right under the root), mode
  // 0700 owned by `owner_uid`, or 0755 owned by the daemon when owner_uid is -1. AlreadyExists
  // when something is there.
  Status MakeDir(std::string_view parent, std::string_view name, int owner_uid) const;

  // How the daemon opens `path` (absolute, as the traced process sees it, beneath the root).
  FileBeneath Locate(std::string_view path, int owner_uid) const;

 private:
  TraceRoot(std::string path, ScopedFd handle);

  std::string path_;
  std::shared_ptr<const ScopedFd> handle_;
};

}  // namespace vigil
