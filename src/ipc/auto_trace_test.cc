// SPDX-License-Identifier: Apache-2.0
#include "ipc/auto_trace.h"

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"

namespace vigil {
namespace {

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kHour = 3600 * kSecond;

class AutoTraceTest : public ::testing::Test {
 protected:
  AutoTraceTest() {
    ProcessRegistryOptions ro;
    ro.match_only_live = false;  // The registered pids are made up.
    ro.verify_credentials = false;
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
    TraceServiceOptions to;
    to.trace_root = root_.path();
    to.max_starts_per_minute = 0;
    service_ = std::make_unique<TraceService>(to, registry_.get());
  }

  void Alive(int pid, int64_t job) {
    ASSERT_TRUE(registry_->Poll({pid, 0, 0}, KinetoRequest{2, job, {pid}}, IpcAddress{}).ok());
  }
  // Keeps processes alive, lets traces finish (the process takes the config), advances time.
  void Advance(int64_t ns) {
    clock_.Advance(ns);
    for (const RegisteredProcess& p : registry_->Snapshot()) {
      Alive(p.pid, p.kineto_job_id);
      registry_->Release(p.host_pid, p.trace_id);
    }
  }

  testing_util::TempDir root_;
  testing_util::FakeClock clock_;
  std::unique_ptr<ProcessRegistry> registry_;
  std::unique_ptr<TraceService> service_;
};

TEST_F(AutoTraceTest, OffByDefault) {
  AutoTracer tracer(AutoTraceOptions{}, service_.get(), clock_.Fn(), [] { return 0; });
  Alive(600, 5);
  tracer.ObserveUtilisation("5", 0.0);
  Advance(24 * kHour);
  EXPECT_TRUE(tracer.Tick().empty());
}

TEST_F(AutoTraceTest, PeriodicSamplesOncePerPeriodAtARandomOffset) {
  AutoTraceOptions options;
  options.periodic = true;
  options.periodic_every_ns = 6 * kHour;
  AutoTracer tracer(options, service_.get(), clock_.Fn(),
                    [] { return uint64_t{2} * 3600 * 1000000000; });
  Alive(600, 5);
  EXPECT_TRUE(tracer.Tick().empty());  // Scheduled 2 h from now.
  Advance(kHour);
  EXPECT_TRUE(tracer.Tick().empty());
  Advance(kHour);
  auto started = tracer.Tick();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].origin, "auto:periodic");
  EXPECT_EQ(started[0].job_id, "5");
  EXPECT_FALSE(started[0].reason.empty());
  Advance(5 * kHour);
  EXPECT_TRUE(tracer.Tick().empty());
  Advance(kHour);
  EXPECT_EQ(tracer.Tick().size(), 1u);
}

TEST_F(AutoTraceTest, LowUtilisationTracesAfterTheWindowWithTheNumbers) {
  AutoTraceOptions options;
  options.low_utilisation = true;
  options.low_utilisation_below = 0.2;
  options.low_utilisation_for_ns = 600 * kSecond;
  AutoTracer tracer(options, service_.get(), clock_.Fn(), [] { return 0; });
  Alive(600, 5);
  tracer.ObserveUtilisation("5", 0.05);
  Advance(300 * kSecond);
  EXPECT_TRUE(tracer.Tick().empty());
  tracer.ObserveUtilisation("5", 0.5);  // Recovers: the window restarts.
  tracer.ObserveUtilisation("5", 0.05);
  Advance(599 * kSecond);
  EXPECT_TRUE(tracer.Tick().empty());
  Advance(2 * kSecond);
  auto started = tracer.Tick();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].origin, "auto:low_utilisation");
  EXPECT_NE(started[0].reason.find("0.050 below 0.200"), std::string::npos) << started[0].reason;
  Advance(60 * kSecond);
  EXPECT_TRUE(tracer.Tick().empty());  // Cool-down.
}

TEST_F(AutoTraceTest, BudgetCapsTracesPerHour) {
  AutoTraceOptions options;
  options.low_utilisation = true;
  options.low_utilisation_for_ns = 0;
  options.max_traces_per_hour = 2;
  AutoTracer tracer(options, service_.get(), clock_.Fn(), [] { return 0; });
  for (int i = 0; i < 4; ++i) {
    Alive(600 + i, 10 + i);
    tracer.ObserveUtilisation(std::to_string(10 + i), 0.0);
  }
  EXPECT_EQ(tracer.Tick().size(), 2u);
  Advance(kSecond);
  EXPECT_TRUE(tracer.Tick().empty());
  Advance(kHour);
  EXPECT_EQ(tracer.Tick().size(), 2u);
}

}  // namespace
}  // namespace vigil
