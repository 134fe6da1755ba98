// SPDX-License-Identifier: Apache-2.0
// Clock jumps, through the injectable clocks (a real jump of the host clock is not possible in
// CI): the wall clock stepping forward or back (NTP, a suspended VM) must not make the scheduler
// burst or stall, and must not change a GPU-second of accounting, which integrates the
// monotonic clock.
#include <atomic>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "collectors/gpu_collector.h"
#include "daemon/scheduler.h"
#include "gpu/sim_backend.h"
#include "metrics/metric.h"

namespace vigil::daemon {
namespace {

constexpr int64_t kSec = kNanosPerSecond;

class SteppedClock : public Clock {
 public:
  int64_t UnixNanos() const override { return unix_; }
  int64_t MonotonicNanos() const override { return mono_; }
  void Advance(int64_t ns) {
    unix_ += ns;
    mono_ += ns;
  }
  void JumpWall(int64_t ns) { unix_ += ns; }  // The wall clock alone steps.

 private:
  std::atomic<int64_t> unix_{1'764'410'990 * kSec};
  std::atomic<int64_t> mono_{1000 * kSec};
};

constexpr MetricDesc kValue{"vigil_host_test_value", "A test value.", MetricKind::kGauge, ""};

class CountingCollector : public Collector {
 public:
  explicit CountingCollector(int* runs) : runs_(runs) {}
  Status Collect(MetricWriter& out) override {
    ++*runs_;
    out.Add(kValue, 1);
    return OkStatus();
  }

 private:
  int* runs_;
};

TEST(ClockJumpTest, WallClockJumpingForwardRunsOnceAndRealignsInsteadOfCatchingUp) {
  SteppedClock clock;
  int batches = 0;
  Scheduler scheduler(&clock, [&batches](BatchPtr) { ++batches; });
  int runs = 0;
  scheduler.Add(
      "a", [&runs] { return std::make_unique<CountingCollector>(&runs); }, 10 * kSec, true);
  scheduler.RunDue();
  EXPECT_EQ(runs, 1);
  clock.JumpWall(3600 * kSec);  // An hour forward: 360 ticks "missed".
  const int64_t next = scheduler.RunDue();
  EXPECT_EQ(runs, 2);  // One run, not 360.
  EXPECT_EQ(next, NextAlignedTick(clock.UnixNanos(), 10 * kSec));
  EXPECT_EQ(scheduler.RunDue(), next);  // Nothing more is due until the next tick.
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(batches, 2);
}

TEST(ClockJumpTest, WallClockJumpingBackDoesNotStallCollection) {
  SteppedClock clock;
  Scheduler scheduler(&clock, [](BatchPtr) {});
  int runs = 0;
  scheduler.Add(
      "a", [&runs] { return std::make_unique<CountingCollector>(&runs); }, 10 * kSec, true);
  scheduler.RunDue();
  clock.JumpWall(-3600 * kSec);  // An hour back: the old tick is an hour away.
  const int64_t next = scheduler.RunDue();
  EXPECT_LE(next - clock.UnixNanos(), 10 * kSec);  // Realigned: within one interval.
  clock.Advance(next - clock.UnixNanos());
  scheduler.RunDue();
  EXPECT_EQ(runs, 2);
}

// Every GPU-second counter of a simulated 8-GPU host after `ticks` one-second ticks, with the
// wall clock stepping by `jumps[i]` before tick i (0 = no jump).
std::map<std::string, double> GpuSeconds(const std::vector<int64_t>& jumps) {
  SteppedClock clock;
  GpuCollectorConfig c;
  c.make_backend = [&clock]() -> StatusOr<std::unique_ptr<GpuBackend>> {
    return std::unique_ptr<GpuBackend>(
        std::make_unique<SimBackend>(8, [&clock] { return clock.MonotonicNanos(); }));
  };
  c.monotonic_ns = [&clock] { return clock.MonotonicNanos(); };
  c.unix_ns = [&clock] { return clock.UnixNanos(); };
  GpuCollector collector(std::move(c));
  std::map<std::string, double> out;
  for (int64_t jump : jumps) {
    clock.JumpWall(jump);
    MetricBatch batch;
    MetricWriter w(&batch);
    EXPECT_TRUE(collector.Collect(w).ok());
    for (const Sample& s : batch.samples) {
      if (s.desc->kind != MetricKind::kCounter || s.desc->unit != "seconds") continue;
      std::string key(s.desc->name);
      for (const auto& [k, v] : s.labels) key += "," + k + "=" + v;
      out[key] = s.value;
    }
    clock.Advance(kSec);
  }
  return out;
}

TEST(ClockJumpTest, GpuSecondsIntegrateTheMonotonicClockThroughWallClockJumps) {
  const std::map<std::string, double> steady = GpuSeconds({0, 0, 0, 0, 0, 0});
  const std::map<std::string, double> jumped =
      GpuSeconds({0, 3600 * kSec, 0, -7200 * kSec, 0, 86400 * kSec});
  ASSERT_FALSE(steady.empty());
  EXPECT_EQ(jumped, steady);  // To the last bit: no second gained or lost.
  double allocated = 0;
  for (const auto& [key, value] : steady) {
    if (key.rfind("vigil_gpu_allocated_seconds_total", 0) == 0) allocated += value;
  }
  EXPECT_GT(allocated, 0);
}

}  // namespace
}  // namespace vigil::daemon
