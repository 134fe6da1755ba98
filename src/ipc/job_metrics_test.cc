// SPDX-License-Identifier: Apache-2.0
#include "ipc/job_metrics.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"

namespace vigil {
namespace {

const Sample* FindSample(const MetricBatch& batch, std::string_view name) {
  for (const Sample& s : batch.samples) {
    if (s.desc->name == name) {
      return &s;
    }
  }
  return nullptr;
}

TEST(JobMetricsTest, DerivesStepTimeMfuAndSecondsPerByte) {
  testing_util::FakeClock clock;
  JobMetrics metrics(clock.Fn());
  RegisteredProcess a;
  a.host_pid = 10;
  a.job_id = "j1";
  a.team = "vision";
  a.peak_flops = 100e12;
  RegisteredProcess b = a;
  b.host_pid = 11;
  // Two processes, each 2 steps of 0.5 s at 25 TFLOP per step: 50 TFLOP/s each of 100 peak.
  ASSERT_TRUE(metrics.Record(a, {2, 1.0, 1000, 25e12}).ok());
  ASSERT_TRUE(metrics.Record(b, {2, 1.0, 3000, 25e12}).ok());
  MetricBatch batch;
  MetricWriter out(&batch);
  ASSERT_TRUE(metrics.Collect(out).ok());
  ASSERT_NE(FindSample(batch, "vigil_job_step_seconds"), nullptr);
  EXPECT_DOUBLE_EQ(FindSample(batch, "vigil_job_step_seconds")->value, 0.5);
  EXPECT_DOUBLE_EQ(FindSample(batch, "vigil_job_model_flops")->value, 25e12);
  EXPECT_DOUBLE_EQ(FindSample(batch, "vigil_job_mfu_ratio")->value, 0.5);
  EXPECT_DOUBLE_EQ(FindSample(batch, "vigil_job_device_seconds_per_input_byte")->value,
                   2.0 / 4000.0);
  EXPECT_EQ(LabelValue(FindSample(batch, "vigil_job_mfu_ratio")->labels, "job_id"), "j1");
  EXPECT_EQ(LabelValue(FindSample(batch, "vigil_job_mfu_ratio")->labels, "team"), "vision");
}

TEST(JobMetricsTest, OmitsMfuWithoutPeakAndForgetsStaleJobs) {
  testing_util::FakeClock clock;
  JobMetrics metrics(clock.Fn(), 10);
  RegisteredProcess p;
  p.job_id = "j2";
  ASSERT_TRUE(metrics.Record(p, {1, 0.2, 0, 1e9}).ok());
  MetricBatch batch;
  MetricWriter out(&batch);
  ASSERT_TRUE(metrics.Collect(out).ok());
  EXPECT_EQ(FindSample(batch, "vigil_job_mfu_ratio"), nullptr);
  EXPECT_EQ(FindSample(batch, "vigil_job_device_seconds_per_input_byte"), nullptr);
  EXPECT_NE(FindSample(batch, "vigil_job_step_seconds"), nullptr);
  clock.Advance(11);
  MetricBatch later;
  MetricWriter out2(&later);
  ASSERT_TRUE(metrics.Collect(out2).ok());
  EXPECT_TRUE(later.samples.empty());
}

TEST(JobMetricsTest, RejectsNonsenseReports) {
  testing_util::FakeClock clock;
  JobMetrics metrics(clock.Fn());
  RegisteredProcess p;
  EXPECT_FALSE(metrics.Record(p, {0, 1, 0, 0}).ok());
  EXPECT_FALSE(metrics.Record(p, {1, -1, 0, 0}).ok());
}

TEST(JobMetricsTest, RefusesAbsurdReportsAndStaysFinite) {
  testing_util::FakeClock clock;
  JobMetrics metrics(clock.Fn());
  RegisteredProcess p;
  p.job_id = "j";
  p.peak_flops = 1e15;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const StepReport& bad :
       std::vector<StepReport>{{1, 1, 0, inf},                  // +Inf FLOPs.
                               {1, 1, 0, nan},                  // NaN.
                               {1, 1, 0, 1e300},                // Above kMaxModelFlopsPerStep.
                               {1, 1, 0, 2e15},                 // MFU 2 against the declared peak.
                               {1, 0, 0, 1},                    // Zero step time.
                               {1, inf, 0, 1},                  // Infinite step time.
                               {1, 2 * kMaxStepSeconds, 0, 1},  // A step of two days.
                               {kMaxStepsPerReport + 1, 1e6, 0, 1}})  // Too many steps.
  {
    EXPECT_EQ(metrics.Record(p, bad).code(), StatusCode::kInvalidArgument)
        << bad.steps << " " << bad.step_seconds << " " << bad.model_flops;
  }
  RegisteredProcess absurd_peak = p;
  absurd_peak.peak_flops = inf;
  EXPECT_FALSE(metrics.Record(absurd_peak, {1, 1, 0, 1}).ok());
  ASSERT_TRUE(metrics.Record(p, {1, 1, 0, 5e14}).ok());
  MetricBatch batch;
  MetricWriter out(&batch);
  ASSERT_TRUE(metrics.Collect(out).ok());
  for (const Sample& s : batch.samples) {
    EXPECT_TRUE(std::isfinite(s.value)) << s.desc->name;
  }
  EXPECT_DOUBLE_EQ(FindSample(batch, "vigil_job_mfu_ratio")->value, 0.5);
}

TEST(JobMetricsTest, OneProcessCannotRelabelTheJob) {
  testing_util::FakeClock clock;
  JobMetrics metrics(clock.Fn());
  RegisteredProcess a;
  a.host_pid = 1;
  a.job_id = "j";
  a.team = "first";
  RegisteredProcess b = a;
  b.host_pid = 2;
  b.team = "second";
  b.model = "m";
  ASSERT_TRUE(metrics.Record(a, {1, 1, 0, 1}).ok());
  ASSERT_TRUE(metrics.Record(b, {1, 1, 0, 1}).ok());
  MetricBatch batch;
  MetricWriter out(&batch);
  ASSERT_TRUE(metrics.Collect(out).ok());
  const Sample* s = FindSample(batch, "vigil_job_step_seconds");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(LabelValue(s->labels, "team"), "first");
  EXPECT_EQ(LabelValue(s->labels, "model"), "m");  // Missing labels may still be filled.
}

}  // namespace
}  // namespace vigil
