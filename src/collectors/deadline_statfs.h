// SPDX-License-Identifier: Apache-2.0
// statvfs(2) with a deadline. On a dead NFS or FUSE mount statvfs can block for minutes (or for
// ever, on a hard mount), which would stall the filesystem collector's tick and with it every
// other mount's numbers. DeadlineStatfs runs each call on a worker thread and waits at most
// `timeout`; a call still blocked then is left to finish in the background, and until it does,
// that mount point answers Unavailable at once instead of taking another thread, so a stuck mount
// costs one parked thread, not one per tick. Workers are reused from call to call (a thread per
// call and mount cost more CPU than the statvfs calls themselves) and end after a minute idle.
// Owner: the filesystem collector. Thread-safe.
#pragma once

#include <chrono>
#include <memory>

#include "collectors/statvfs_filesystem_collector.h"

namespace vigil {

// Wraps `inner` (statvfs or a test double). The result is copyable and shares its state.
StatFsFunction DeadlineStatfs(StatFsFunction inner, std::chrono::milliseconds timeout);

}  // namespace vigil
