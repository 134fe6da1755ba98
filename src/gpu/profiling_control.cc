// SPDX-License-Identifier: Apache-2.0
#include "gpu/profiling_control.h"

#include <atomic>
#include <limits>

#include "base/time_util.h"

namespace vigil {
namespace {

constexpr int64_t kNotPaused = 0;
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
// Monotonic deadline of the pause; kNotPaused when not paused.
std::atomic<int64_t> g_pause_until_ns{kNotPaused};

}  // namespace

Status PauseGpuProfiling(int64_t duration_s) {
  const int64_t until = duration_s <= 0 ? kForever : MonotonicNanos() + duration_s * 1'000'000'000;
  g_pause_until_ns.store(until);
  return OkStatus();
}

Status ResumeGpuProfiling() {
  g_pause_until_ns.store(kNotPaused);
  return OkStatus();
}

bool GpuProfilingPaused() {
  const int64_t until = g_pause_until_ns.load();
  return until != kNotPaused && MonotonicNanos() < until;
}

int64_t GpuProfilingPauseRemainingSeconds() {
  const int64_t until = g_pause_until_ns.load();
  if (until == kForever) return -1;
  const int64_t now = MonotonicNanos();
  if (until == kNotPaused || now >= until) return 0;
  return (until - now + 999'999'999) / 1'000'000'000;
}

}  // namespace vigil
