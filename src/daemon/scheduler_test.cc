// SPDX-License-Identifier: Apache-2.0
#include "daemon/scheduler.h"

#include <time.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "base/time_util.h"

namespace vigil::daemon {
namespace {

class FakeClock : public Clock {
 public:
  int64_t UnixNanos() const override { return now_; }
  int64_t MonotonicNanos() const override { return now_; }
  void Set(int64_t ns) { now_ = ns; }
  void Advance(int64_t ns) { now_ += ns; }

 private:
  std::atomic<int64_t> now_{0};
};

constexpr MetricDesc kValue{"vigil_host_test_value", "A test value.", MetricKind::kGauge, ""};

// Writes one sample per run, or fails the way it is told to; advances the clock by `cost`.
class FakeCollector : public Collector {
 public:
  FakeCollector(FakeClock* clock, Status result, int64_t cost_ns, int* runs)
      : clock_(clock), result_(std::move(result)), cost_ns_(cost_ns), runs_(runs) {}
  Status Collect(MetricWriter& out) override {
    ++*runs_;
    clock_->Advance(cost_ns_);
    out.Add(kValue, *runs_);
    return result_;
  }

 private:
  FakeClock* clock_;
  Status result_;
  int64_t cost_ns_;
  int* runs_;
};

constexpr int64_t kSec = kNanosPerSecond;

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kSec + ts.tv_nsec;
}

// Spends `cpu_ns` of its thread's CPU time per run.
class BusyCollector : public Collector {
 public:
  explicit BusyCollector(int64_t cpu_ns) : cpu_ns_(cpu_ns) {}
  Status Collect(MetricWriter& /*out*/) override {
    const int64_t until = ThreadCpuNs() + cpu_ns_;
    volatile uint64_t spin = 0;
    while (ThreadCpuNs() < until) {
      spin = spin + 1;
    }
    return OkStatus();
  }

 private:
  int64_t cpu_ns_;
};

TEST(NextAlignedTickTest, LandsOnTheNextWallClockMultiple) {
  EXPECT_EQ(NextAlignedTick(1000 * kSec + 3 * kSec, 10 * kSec), 1010 * kSec);
  EXPECT_EQ(NextAlignedTick(1000 * kSec, 10 * kSec), 1010 * kSec);  // Strictly after.
  EXPECT_EQ(NextAlignedTick(1009 * kSec + 999, 10 * kSec), 1010 * kSec);
  EXPECT_EQ(NextAlignedTick(1234567, kSec), kSec);
  EXPECT_EQ(NextAlignedTick(59 * kSec, 60 * kSec), 60 * kSec);
}

struct Harness {
  FakeClock clock;
  std::vector<BatchPtr> batches;
  std::unique_ptr<Scheduler> scheduler =
      std::make_unique<Scheduler>(&clock, [this](BatchPtr b) { batches.push_back(std::move(b)); });
  void Add(const std::string& name, Status result, int64_t interval, int* runs, int64_t cost = 0,
           bool enabled = true) {
    scheduler->Add(
        name,
        [this, result, cost, runs] {
          return std::make_unique<FakeCollector>(&clock, result, cost, runs);
        },
        interval, enabled);
  }
  const CollectorHealth& Health(const std::string& name) {
    health = scheduler->Health();
    for (const auto& h : health) {
      if (h.name == name) {
        return h;
      }
    }
    static CollectorHealth none;
    return none;
  }
  std::vector<CollectorHealth> health;
};

TEST(SchedulerTest, RunsAtOnceThenOnAlignedTicks) {
  Harness h;
  int runs = 0;
  h.Add("fast", OkStatus(), 10 * kSec, &runs, /*cost=*/kNanosPerMilli);
  h.clock.Set(1003 * kSec);
  EXPECT_EQ(h.scheduler->RunDue(), 1010 * kSec);
  EXPECT_EQ(runs, 1);
  h.clock.Set(1009 * kSec);
  EXPECT_EQ(h.scheduler->RunDue(), 1010 * kSec);
  EXPECT_EQ(runs, 1);  // Not due yet.
  h.clock.Set(1010 * kSec);
  EXPECT_EQ(h.scheduler->RunDue(), 1020 * kSec);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(h.scheduler->last_pass_unix_ns(), 1010 * kSec + kNanosPerMilli);
}

TEST(SchedulerTest, EachCollectorKeepsItsOwnInterval) {
  Harness h;
  int fast = 0;
  int slow = 0;
  h.Add("fast", OkStatus(), kSec, &fast);
  h.Add("slow", OkStatus(), 5 * kSec, &slow);
  h.clock.Set(100 * kSec);
  for (int i = 0; i < 10; ++i) {
    const int64_t next = h.scheduler->RunDue();
    h.clock.Set(next);
  }
  EXPECT_EQ(fast, 10);
  EXPECT_EQ(slow, 2);  // At 100 s (start) and 105 s.
}

TEST(SchedulerTest, SlowRunSkipsMissedTicksInsteadOfBunching) {
  Harness h;
  int runs = 0;
  h.Add("slow", OkStatus(), kSec, &runs, /*cost=*/2500 * kNanosPerMilli);
  h.clock.Set(10 * kSec);
  EXPECT_EQ(h.scheduler->RunDue(), 13 * kSec);  // Ran 10 s .. 12.5 s; next tick 13 s.
}

TEST(SchedulerTest, HealthAndMetaMetricsDistinguishOkAbsentAndFailed) {
  Harness h;
  int ok_runs = 0;
  int absent_runs = 0;
  int failed_runs = 0;
  h.Add("good", OkStatus(), kSec, &ok_runs);
  h.Add("missing", NotFoundError("open /proc/pressure/cpu: no such file"), kSec, &absent_runs);
  h.Add("broken", DataLossError("bad line"), kSec, &failed_runs);
  h.clock.Set(50 * kSec);
  h.scheduler->RunDue();
  EXPECT_EQ(h.Health("good").state, CollectorState::kOk);
  EXPECT_EQ(h.Health("missing").state, CollectorState::kAbsent);
  EXPECT_EQ(h.Health("broken").state, CollectorState::kFailed);
  EXPECT_EQ(h.Health("broken").message, "bad line");
  EXPECT_EQ(h.Health("good").samples, 1u);
  EXPECT_EQ(h.Health("good").last_run_unix_ns, 50 * kSec);

  ASSERT_EQ(h.batches.size(), 3u);
  for (const BatchPtr& b : h.batches) {
    double success = -1;
    double samples = -1;
    bool duration = false;
    for (const Sample& s : b->samples) {
      if (s.desc->name == "vigil_collector_success") {
        EXPECT_EQ(LabelValue(s.labels, "collector"), b->source);
        success = s.value;
      } else if (s.desc->name == "vigil_collector_samples") {
        samples = s.value;
      } else if (s.desc->name == "vigil_collector_duration_seconds") {
        duration = true;
      }
    }
    EXPECT_EQ(success, b->source == "good" ? 1 : 0) << b->source;
    EXPECT_EQ(samples, 1) << b->source;  // Partial output is kept.
    EXPECT_TRUE(duration);
    // Only a failed run's batch is partial: the store keeps that collector's other series.
    EXPECT_EQ(b->complete, b->source != "broken") << b->source;
  }
}

TEST(SchedulerTest, EachCollectorsCpuTimeIsACounterOverItsRuns) {
  FakeClock clock;
  std::vector<BatchPtr> batches;
  Scheduler scheduler(&clock, [&](BatchPtr b) { batches.push_back(std::move(b)); });
  const int64_t cost = 20 * kNanosPerMilli;
  scheduler.Add(
      "busy", [cost] { return std::make_unique<BusyCollector>(cost); }, kSec, true);

  clock.Set(10 * kSec);
  scheduler.RunDue();
  clock.Set(11 * kSec);
  scheduler.RunDue();

  ASSERT_EQ(batches.size(), 2u);
  std::vector<double> cpu;
  for (const BatchPtr& b : batches) {
    for (const Sample& s : b->samples) {
      if (s.desc->name == "vigil_collector_cpu_seconds_total") {
        EXPECT_EQ(LabelValue(s.labels, "collector"), "busy");
        EXPECT_EQ(s.desc->kind, MetricKind::kCounter);
        cpu.push_back(s.value);
      }
    }
  }
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_GE(cpu[0], 0.020);
  EXPECT_GE(cpu[1], cpu[0] + 0.020);
  EXPECT_LT(cpu[1], 2.0);  // Its own thread's time only, not the process's.
}

TEST(SchedulerTest, ConfigureChangesIntervalsAndSwitchesCollectors) {
  Harness h;
  int a = 0;
  int b = 0;
  h.Add("a", OkStatus(), 10 * kSec, &a);
  h.Add("b", OkStatus(), 10 * kSec, &b, 0, /*enabled=*/false);
  h.clock.Set(100 * kSec);
  h.scheduler->RunDue();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  EXPECT_EQ(h.Health("b").state, CollectorState::kDisabled);

  ASSERT_TRUE(h.scheduler->Configure("a", 2 * kSec, true).ok());
  ASSERT_TRUE(h.scheduler->Configure("b", 10 * kSec, true).ok());
  EXPECT_EQ(h.scheduler->RunDue(), 102 * kSec);  // b ran at once; a now ticks every 2 s.
  EXPECT_EQ(b, 1);
  EXPECT_EQ(h.Health("a").interval_ns, 2 * kSec);

  ASSERT_TRUE(h.scheduler->Configure("b", 10 * kSec, false).ok());
  h.clock.Set(110 * kSec);
  h.scheduler->RunDue();
  EXPECT_EQ(b, 1);
  EXPECT_EQ(h.Health("b").state, CollectorState::kDisabled);
  EXPECT_EQ(h.scheduler->Configure("nope", kSec, true).code(), StatusCode::kNotFound);
}

TEST(SchedulerTest, NullFactoryMakesTheCollectorFailedNotTheDaemon) {
  FakeClock clock;
  int batches = 0;
  Scheduler scheduler(&clock, [&](BatchPtr) { ++batches; });
  scheduler.Add(
      "null", [] { return std::unique_ptr<Collector>(); }, kSec, true);
  scheduler.RunAllOnce();
  auto health = scheduler.Health();
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(health[0].state, CollectorState::kFailed);
  EXPECT_EQ(batches, 1);
}

class ThrowingCollector : public Collector {
 public:
  Status Collect(MetricWriter&) override { throw std::runtime_error("boom"); }
};

TEST(SchedulerTest, AThrowingCollectorFailsOnlyItself) {
  Harness h;
  int runs = 0;
  h.Add("good", OkStatus(), kSec, &runs);
  h.scheduler->Add(
      "thrower", [] { return std::make_unique<ThrowingCollector>(); }, kSec, true);
  h.clock.Set(10 * kSec);
  h.scheduler->RunDue();
  EXPECT_EQ(h.Health("thrower").state, CollectorState::kFailed);
  EXPECT_EQ(h.Health("thrower").message, "exception: boom");
  EXPECT_EQ(h.Health("good").state, CollectorState::kOk);
  EXPECT_EQ(runs, 1);
}

TEST(SchedulerTest, WallClockGoingBackRealignsTheTick) {
  Harness h;
  int runs = 0;
  h.Add("a", OkStatus(), 10 * kSec, &runs);
  h.clock.Set(1000 * kSec);
  h.scheduler->RunDue();
  h.clock.Set(500 * kSec);  // The wall clock steps back 500 s.
  EXPECT_EQ(h.scheduler->RunDue(), 510 * kSec);
  h.clock.Set(510 * kSec);
  h.scheduler->RunDue();
  EXPECT_EQ(runs, 2);
}

TEST(SchedulerTest, StartAndStopDoNotHangWithLongIntervals) {
  // The loop waits on a condition variable with a stop token: Stop() ends an hour-long wait.
  int runs = 0;
  std::atomic<int> batches{0};
  Scheduler scheduler(&SystemClock(), [&](BatchPtr) { ++batches; });
  FakeClock unused;
  scheduler.Add(
      "hourly", [&] { return std::make_unique<FakeCollector>(&unused, OkStatus(), 0, &runs); },
      3600 * kSec, true);
  scheduler.Start();
  const int64_t deadline = MonotonicNanos() + 10 * kSec;
  while (scheduler.last_pass_unix_ns() == 0 && MonotonicNanos() < deadline) {
    std::this_thread::yield();
  }
  scheduler.Stop();
  EXPECT_EQ(batches.load(), 1);
}

}  // namespace
}  // namespace vigil::daemon
