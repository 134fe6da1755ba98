// SPDX-License-Identifier: Apache-2.0
#include "collectors/gpu_collector.h"

#include <gtest/gtest.h>

#include "collectors/gpu_metrics.h"
#include "gpu/sim_backend.h"
#include "metrics/naming.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;

// A scripted in-process backend: the test edits `readings` between ticks.
class ScriptedBackend : public GpuBackend {
 public:
  explicit ScriptedBackend(std::vector<GpuReading>* readings) : readings_(readings) {}
  std::string_view name() const override { return "scripted"; }
  Status Read(std::vector<GpuReading>* out) override {
    *out = *readings_;
    return OkStatus();
  }
  std::string Describe() const override { return "scripted"; }

 private:
  std::vector<GpuReading>* readings_;
};

GpuReading H100(int index, std::vector<int> pids) {
  GpuReading r;
  r.index = index;
  r.uuid = "GPU-" + std::to_string(index);
  r.name = "NVIDIA H100 80GB HBM3";
  r.utilization_ratio = 1.0;
  r.power_watts = 500;
  r.sm_clock_hz = 1755e6;
  r.activity.sm_active = 0.5;
  r.activity.hmma_active = 0.5;
  r.activity.fp32_active = 0.1;
  r.activity.dram_active = 0.25;
  r.processes_known = true;
  for (int pid : pids) r.processes.push_back({pid, 1000, std::nullopt, std::nullopt, std::nullopt});
  return r;
}

const Sample* Find(const MetricBatch& batch, std::string_view name, const Labels& match) {
  for (const Sample& s : batch.samples) {
    if (s.desc->name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) ok &= LabelValue(s.labels, k) == v;
    if (ok) return &s;
  }
  return nullptr;
}

struct Harness {
  std::vector<GpuReading> readings;
  int64_t mono = 100 * kSec;
  int make_calls = 0;
  bool fail_init = false;
  std::shared_ptr<WatchList> watch = std::make_shared<WatchList>();
  std::unique_ptr<GpuCollector> collector;

  Harness() {
    GpuCollectorConfig c;
    c.make_backend = [this]() -> StatusOr<std::unique_ptr<GpuBackend>> {
      ++make_calls;
      if (fail_init) return UnavailableError("nvmlInit: NVML_ERROR_DRIVER_NOT_LOADED");
      return std::unique_ptr<GpuBackend>(std::make_unique<ScriptedBackend>(&readings));
    };
    c.resolve = [](int pid) -> StatusOr<JobInfo> {
      if (pid == 999) return NotFoundError("gone");
      JobInfo info;
      info.job_id = pid < 200 ? "job-a" : "job-b";
      info.user = "alice";
      info.team = "llm";
      info.model = "llama";
      info.framework = "pytorch";
      info.rule = "slurm_cgroup";
      return info;
    };
    c.watch_list = watch;
    c.monotonic_ns = [this] { return mono; };
    c.unix_ns = [this] { return mono; };
    c.retry_init_ns = 30 * kSec;
    collector = std::make_unique<GpuCollector>(std::move(c));
  }
  Status Tick(MetricBatch* batch) {
    *batch = MetricBatch{};
    MetricWriter w(batch);
    return collector->Collect(w);
  }
};

TEST(GpuCollectorTest, MetricFamiliesFollowNamingRules) {
  for (const MetricDesc* d : gpu_metrics::kAll) EXPECT_TRUE(CheckMetricDesc(*d).ok()) << d->name;
}

TEST(GpuCollectorTest, FlopsEstimateMatchesHandComputation) {
  Harness h;
  h.readings = {H100(0, {})};
  MetricBatch b;
  ASSERT_TRUE(h.Tick(&b).ok());
  const Sample* f = Find(b, "vigil_gpu_flops_estimated", {{"gpu_uuid", "GPU-0"}});
  ASSERT_NE(f, nullptr);
  // 132 SMs x 1755 MHz x (0.5 x 4096 + 0.1 x 256) = 480.370176e12 FLOP/s.
  EXPECT_DOUBLE_EQ(f->value, 480.370176e12);
  EXPECT_EQ(LabelValue(f->labels, "gpu_model"), "H100 SXM");
  const Sample* bw = Find(b, "vigil_gpu_memory_bandwidth_used_bytes_per_second", {});
  ASSERT_NE(bw, nullptr);
  EXPECT_DOUBLE_EQ(bw->value, 0.25 * 3.35e12);
  EXPECT_NE(Find(b, "vigil_gpu_pipe_active_ratio", {{"pipe", "fp16_tensor"}}), nullptr);
}

TEST(GpuCollectorTest, NoPipeActivityMeansNoFlopsSample) {
  Harness h;
  GpuReading r = H100(0, {});
  r.activity = {};
  h.readings = {r};
  MetricBatch b;
  ASSERT_TRUE(h.Tick(&b).ok());
  EXPECT_EQ(Find(b, "vigil_gpu_flops_estimated", {}), nullptr);
  EXPECT_NE(Find(b, "vigil_gpu_utilization_ratio", {}), nullptr);
}

TEST(GpuCollectorTest, PerJobSecondsAddUpToWallTimeExactly) {
  Harness h;
  h.readings = {H100(0, {101, 102}), H100(1, {201}), H100(2, {101, 201})};
  MetricBatch b;
  const int64_t start = h.mono;
  const int64_t steps[] = {kSec, kSec + 7, 999'999'999, 3 * kSec + 1, 2};
  ASSERT_TRUE(h.Tick(&b).ok());
  for (int64_t step : steps) {
    h.mono += step;
    ASSERT_TRUE(h.Tick(&b).ok());
  }
  const double wall = static_cast<double>(h.mono - start) / 1e9;
  // GPU 0: two processes of job-a -> one job; GPU 2 is shared by two jobs.
  EXPECT_DOUBLE_EQ(
      Find(b, "vigil_gpu_allocated_seconds_total", {{"gpu_uuid", "GPU-0"}, {"job_id", "job-a"}})
          ->value,
      wall);
  EXPECT_DOUBLE_EQ(
      Find(b, "vigil_gpu_allocated_seconds_total", {{"gpu_uuid", "GPU-1"}, {"job_id", "job-b"}})
          ->value,
      wall);
  const double a2 =
      Find(b, "vigil_gpu_allocated_seconds_total", {{"gpu_uuid", "GPU-2"}, {"job_id", "job-a"}})
          ->value;
  const double b2 =
      Find(b, "vigil_gpu_allocated_seconds_total", {{"gpu_uuid", "GPU-2"}, {"job_id", "job-b"}})
          ->value;
  EXPECT_DOUBLE_EQ(a2 + b2, wall);
  const Sample* busy = Find(b, "vigil_gpu_busy_seconds_total", {{"gpu_uuid", "GPU-0"}});
  EXPECT_DOUBLE_EQ(busy->value, wall * 0.5);  // Weighted by SM activity.
  EXPECT_EQ(LabelValue(busy->labels, "rule"), "slurm_cgroup");
  EXPECT_EQ(LabelValue(busy->labels, "team"), "llm");
  EXPECT_EQ(LabelValue(busy->labels, "framework"), "pytorch");
  // Exactly the accounting labels (the writer sorts them by name).
  std::vector<std::string> names;
  for (const auto& [k, v] : busy->labels) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"framework", "gpu_uuid", "job_id", "model", "rule",
                                             "team", "user"}));
  // Energy: power 500 W throughout, no counter -> 500 x wall on each GPU, all attributed.
  EXPECT_NEAR(Find(b, "vigil_gpu_energy_joules_total", {{"gpu_uuid", "GPU-2"}})->value, 500 * wall,
              1e-6);
  EXPECT_NEAR(
      Find(b, "vigil_job_gpu_energy_joules_total", {{"gpu_uuid", "GPU-2"}, {"job_id", "job-a"}})
              ->value +
          Find(b, "vigil_job_gpu_energy_joules_total", {{"gpu_uuid", "GPU-2"}, {"job_id", "job-b"}})
              ->value,
      500 * wall, 1e-6);
}

TEST(GpuCollectorTest, HeldButIdleGpuCountsIdleSeconds) {
  Harness h;
  GpuReading r = H100(0, {101});
  r.activity.sm_active = 0.0;
  h.readings = {r};
  MetricBatch b;
  ASSERT_TRUE(h.Tick(&b).ok());
  h.mono += 10 * kSec;
  ASSERT_TRUE(h.Tick(&b).ok());
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_held_idle_seconds_total", {})->value, 10.0);
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_busy_seconds_total", {})->value, 0.0);
}

TEST(GpuCollectorTest, GpuPidsJoinTheWatchListAndUnknownPidsAreUnresolved) {
  Harness h;
  h.readings = {H100(0, {101, 999})};
  MetricBatch b;
  ASSERT_TRUE(h.Tick(&b).ok());
  auto entries = h.watch->Snapshot(h.mono, 60 * kSec);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].reason, "gpu");
  h.mono += kSec;
  ASSERT_TRUE(h.Tick(&b).ok());
  EXPECT_NE(Find(b, "vigil_gpu_allocated_seconds_total", {{"rule", "unresolved"}}), nullptr);
}

TEST(GpuCollectorTest, LostGpuIsReportedAndRecovers) {
  Harness h;
  h.readings = {H100(0, {101}), H100(1, {201})};
  MetricBatch b;
  ASSERT_TRUE(h.Tick(&b).ok());
  h.readings[1].up = false;
  h.readings[1].status = "nvmlDeviceGetUtilizationRates: NVML_ERROR_GPU_IS_LOST [15]";
  h.mono += kSec;
  Status s = h.Tick(&b);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("GPU-1"), std::string::npos);
  EXPECT_NE(s.message().find("GPU_IS_LOST"), std::string::npos);
  EXPECT_EQ(Find(b, "vigil_gpu_up", {{"gpu_uuid", "GPU-1"}})->value, 0);
  EXPECT_EQ(Find(b, "vigil_gpu_up", {{"gpu_uuid", "GPU-0"}})->value, 1);
  EXPECT_NE(Find(b, "vigil_gpu_flops_estimated", {{"gpu_uuid", "GPU-0"}}), nullptr);
  h.readings[1] = H100(1, {201});
  h.mono += kSec;
  EXPECT_TRUE(h.Tick(&b).ok());
  EXPECT_EQ(Find(b, "vigil_gpu_up", {{"gpu_uuid", "GPU-1"}})->value, 1);
  // The lost tick is not allocated: 2 s of wall time, 1 s held while readable.
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_allocated_seconds_total", {{"gpu_uuid", "GPU-1"}})->value,
                   1.0);
}

TEST(GpuCollectorTest, FailedInitIsRetriedAfterTheRetryInterval) {
  Harness h;
  h.fail_init = true;
  MetricBatch b;
  EXPECT_EQ(h.Tick(&b).code(), StatusCode::kUnavailable);
  h.mono += 10 * kSec;
  EXPECT_EQ(h.Tick(&b).code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.make_calls, 1);  // Not retried before 30 s.
  h.fail_init = false;
  h.readings = {H100(0, {})};
  h.mono += 21 * kSec;
  EXPECT_TRUE(h.Tick(&b).ok());
  EXPECT_EQ(h.make_calls, 2);
  EXPECT_NE(Find(b, "vigil_gpu_up", {}), nullptr);
}

TEST(GpuCollectorTest, SimulatedBackendLabelsEverySample) {
  int64_t mono = 0;
  GpuCollectorConfig c;
  c.make_backend = [&mono]() -> StatusOr<std::unique_ptr<GpuBackend>> {
    return std::unique_ptr<GpuBackend>(std::make_unique<SimBackend>(8, [&mono] { return mono; }));
  };
  c.monotonic_ns = [&mono] { return mono; };
  c.unix_ns = [&mono] { return mono; };
  GpuCollector collector(std::move(c));
  MetricBatch b;
  for (int i = 0; i < 3; ++i) {
    b = MetricBatch{};
    MetricWriter w(&b);
    ASSERT_TRUE(collector.Collect(w).ok());
    mono += kSec;
  }
  ASSERT_FALSE(b.samples.empty());
  for (const Sample& s : b.samples) {
    EXPECT_EQ(LabelValue(s.labels, "simulated"), "true") << s.desc->name;
  }
  EXPECT_NE(Find(b, "vigil_gpu_flops_estimated", {{"gpu_index", "0"}}), nullptr);
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_held_idle_seconds_total", {{"job_id", "sim-nb-3003"}})->value,
                   2.0);
  EXPECT_NE(Find(b, "vigil_gpu_allocated_seconds_total",
                 {{"job_id", "sim-ft-2002"}, {"framework", "jax"}}),
            nullptr);
}

}  // namespace
}  // namespace vigil
