// SPDX-License-Identifier: Apache-2.0
#include "collectors/deadline_statfs.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "base/time_util.h"

namespace vigil {
namespace {

// A worker left idle this long ends; the next call starts another.
constexpr std::chrono::seconds kIdleExit{60};

// What one call hands back from its worker.
struct Call {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  StatusOr<FsStats> result = InternalError("statvfs did not run");
};

// The workers of one DeadlineStatfs: those idle wait for the next call; one blocked in statvfs
// is not idle, so the next call goes to another (a new one if none is idle). Mount points whose
// call outlived its deadline and has not returned yet are kept with when it started.
struct Pool {
  std::mutex mu;
  std::condition_variable work_cv;
  int idle = 0;
  bool has_job = false;  // `job_mount` / `job_call` wait for an idle worker.
  std::string job_mount;
  std::shared_ptr<Call> job_call;
  std::map<std::string, int64_t> stuck_since_ns;
};

// Runs calls until idle for kIdleExit. Owns copies of everything it touches: it may outlive the
// collector.
void Work(const StatFsFunction& inner, const std::shared_ptr<Pool>& pool, std::string mount_point,
          std::shared_ptr<Call> call) {
  while (true) {
    StatusOr<FsStats> r = inner(mount_point);
    {
      // Idle before the answer is out, so the caller's next call finds this worker; both locks
      // (in the caller's order), so a caller that just gave up sees either done or stuck.
      std::lock_guard lock(pool->mu);
      pool->stuck_since_ns.erase(mount_point);
      ++pool->idle;
      std::lock_guard call_lock(call->mu);
      call->result = std::move(r);
      call->done = true;
    }
    call->done_cv.notify_one();
    call.reset();
    std::unique_lock lock(pool->mu);
    if (!pool->work_cv.wait_for(lock, kIdleExit, [&] { return pool->has_job; })) {
      --pool->idle;
      return;
    }
    --pool->idle;
    pool->has_job = false;
    mount_point = std::move(pool->job_mount);
    call = std::move(pool->job_call);
  }
}

}  // namespace

StatFsFunction DeadlineStatfs(StatFsFunction inner, std::chrono::milliseconds timeout) {
  auto pool = std::make_shared<Pool>();
  return [inner = std::move(inner), timeout, pool](const std::string& mount_point) {
    auto call = std::make_shared<Call>();
    const int64_t start_ns = UnixNanos();
    {
      std::lock_guard lock(pool->mu);
      if (auto it = pool->stuck_since_ns.find(mount_point); it != pool->stuck_since_ns.end()) {
        return StatusOr<FsStats>(
            UnavailableError("statvfs " + mount_point + " still blocked after " +
                             FormatDuration(UnixNanos() - it->second) + " (dead network mount?)"));
      }
      // Calls come one at a time (the collector waits for each), so at most one job is queued.
      if (pool->idle > 0 && !pool->has_job) {
        pool->has_job = true;
        pool->job_mount = mount_point;
        pool->job_call = call;
        pool->work_cv.notify_one();
      } else {
        std::thread(Work, inner, pool, mount_point, call).detach();
      }
    }
    std::unique_lock lock(call->mu);
    if (call->done_cv.wait_for(lock, timeout, [&] { return call->done; })) {
      return std::move(call->result);
    }
    lock.unlock();
    std::lock_guard pool_lock(pool->mu);
    if (pool->has_job && pool->job_call == call) {  // No worker took it in time: withdraw it.
      pool->has_job = false;
      pool->job_call.reset();
    } else if (std::lock_guard again(call->mu); !call->done) {
      // Not done under both locks: the worker erases this entry when it returns.
      pool->stuck_since_ns.emplace(mount_point, start_ns);
    }
    return StatusOr<FsStats>(DeadlineExceededError(
        "statvfs " + mount_point + " took longer than " +
        FormatDuration(std::chrono::nanoseconds(timeout).count()) + " (dead network mount?)"));
  };
}

}  // namespace vigil
