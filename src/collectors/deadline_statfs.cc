// SPDX-License-Identifier: Apache-2.0
#include "collectors/deadline_statfs.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/time_util.h"

namespace vigil {
namespace {

// What one call hands back from its thread.
struct Call {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  StatusOr<FsStats> result = InternalError("statvfs did not run");
};

// Mount points whose call outlived its deadline and has not returned yet, with when it started.
struct Stuck {
  std::mutex mu;
  std::map<std::string, int64_t> since_ns;
};

}  // namespace

StatFsFunction DeadlineStatfs(StatFsFunction inner, std::chrono::milliseconds timeout) {
  auto stuck = std::make_shared<Stuck>();
  return [inner = std::move(inner), timeout, stuck](const std::string& mount_point) {
    {
      std::lock_guard lock(stuck->mu);
      if (auto it = stuck->since_ns.find(mount_point); it != stuck->since_ns.end()) {
        return StatusOr<FsStats>(
            UnavailableError("statvfs " + mount_point + " still blocked after " +
                             FormatDuration(UnixNanos() - it->second) + " (dead network mount?)"));
      }
    }
    auto call = std::make_shared<Call>();
    const int64_t start_ns = UnixNanos();
    // The thread owns copies of everything it touches: it may outlive this collector.
    std::thread([inner, call, stuck, mount_point] {
      StatusOr<FsStats> r = inner(mount_point);
      {
        std::lock_guard lock(call->mu);
        call->result = std::move(r);
        call->done = true;
      }
      call->done_cv.notify_one();
      std::lock_guard lock(stuck->mu);
      stuck->since_ns.erase(mount_point);
    }).detach();
    std::unique_lock lock(call->mu);
    if (call->done_cv.wait_for(lock, timeout, [&] { return call->done; })) {
      return std::move(call->result);
    }
    lock.unlock();
    std::lock_guard stuck_lock(stuck->mu);
    // The call may have finished between the wait and here; then it has already erased itself.
    if (std::lock_guard again(call->mu); !call->done) {
      stuck->since_ns.emplace(mount_point, start_ns);
    }
    return StatusOr<FsStats>(DeadlineExceededError(
        "statvfs " + mount_point + " took longer than " +
        FormatDuration(std::chrono::nanoseconds(timeout).count()) + " (dead network mount?)"));
  };
}

}  // namespace vigil
