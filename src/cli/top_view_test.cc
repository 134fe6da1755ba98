// SPDX-License-Identifier: Apache-2.0
#include "cli/top_view.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

SeriesView Series(std::string name, std::string kind, std::map<std::string, std::string> labels,
                  std::vector<std::pair<int64_t, double>> points) {
  SeriesView s;
  s.name = std::move(name);
  s.kind = std::move(kind);
  s.labels = std::move(labels);
  s.points = std::move(points);
  return s;
}

TEST(TopViewTest, RatesComeFromTheNewestTwoPoints) {
  auto rates = RatesFromRange({
      Series("c", "counter", {{"mode", "idle"}},
             {{0, 0}, {1'000'000'000, 10}, {3'000'000'000, 14}}),
      Series("single", "counter", {}, {{0, 1}}),
      Series("reset", "counter", {}, {{0, 10}, {1'000'000'000, 2}}),
  });
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_DOUBLE_EQ(rates[R"(c{mode="idle"})"], 2.0);
}

TEST(TopViewTest, RendersHostCgroupAndGpuSections) {
  TopData d;
  d.time_ns = 1'800'000'000'000'000'000;
  d.latest = {
      Series("vigil_host_cpu_seconds_total", "counter", {{"cpu", "all"}, {"mode", "idle"}},
             {{1, 100}}),
      Series("vigil_host_cpu_seconds_total", "counter", {{"cpu", "all"}, {"mode", "user"}},
             {{1, 100}}),
      Series("vigil_host_cpu_seconds_total", "counter", {{"cpu", "0"}, {"mode", "user"}},
             {{1, 50}}),
      Series("vigil_host_load1", "gauge", {}, {{1, 0.5}}),
      Series("vigil_host_load15", "gauge", {}, {{1, 1.5}}),
      Series("vigil_host_pressure_waiting_ratio", "gauge", {{"resource", "io"}}, {{1, 0.02}}),
      Series("vigil_host_memory_total_bytes", "gauge", {}, {{1, 8.0 * (1 << 30)}}),
      Series("vigil_host_memory_available_bytes", "gauge", {}, {{1, 6.0 * (1 << 30)}}),
      Series("vigil_cgroup_cpu_usage_seconds_total", "counter", {{"cgroup", "/job_7"}}, {{1, 9}}),
      Series("vigil_gpu_utilization_ratio", "gauge",
             {{"gpu_uuid", "GPU-1"}, {"gpu_index", "0"}, {"gpu_model", "H100"}}, {{1, 0.5}}),
      Series("vigil_gpu_allocated_seconds_total", "counter",
             {{"gpu_uuid", "GPU-1"}, {"job_id", "7"}}, {{1, 30}}),
  };
  d.rates = {{R"(vigil_host_cpu_seconds_total{cpu="all",mode="idle"})", 3.0},
             {R"(vigil_host_cpu_seconds_total{cpu="all",mode="user"})", 1.0},
             {R"(vigil_host_cpu_seconds_total{cpu="0",mode="user"})", 1.0},
             {R"(vigil_cgroup_cpu_usage_seconds_total{cgroup="/job_7"})", 1.5}};
  const std::string frame = RenderTop(d, {});
  // Busy and modes from the host-wide counters only; one per-CPU series counted as one CPU.
  EXPECT_NE(frame.find("CPU     25.0% busy  (1 cpus)\n        usr 25.0%"), std::string::npos)
      << frame;
  EXPECT_NE(frame.find("LOAD    1m 0.50  15m 1.50"), std::string::npos) << frame;
  EXPECT_NE(frame.find("PSI     io 2.0%"), std::string::npos) << frame;
  EXPECT_NE(frame.find("MEMORY  2.0 GiB used of 8.0 GiB (25.0%)"), std::string::npos) << frame;
  EXPECT_NE(frame.find("/job_7  150.0%"), std::string::npos) << frame;
  EXPECT_NE(frame.find("H100"), std::string::npos) << frame;
  EXPECT_NE(frame.find("50.0%"), std::string::npos) << frame;
  EXPECT_EQ(frame.find("\x1b"), std::string::npos);
}

TEST(TopViewTest, UtilizationGaugeWithoutCounterRates) {
  TopData d;
  d.latest = {Series("vigil_host_cpu_utilization_ratio", "gauge", {{"cpu", "all"}}, {{1, 0.9}}),
              Series("vigil_host_cpu_utilization_ratio", "gauge", {{"cpu", "0"}}, {{1, 0.9}}),
              Series("vigil_host_cpu_utilization_ratio", "gauge", {{"cpu", "1"}}, {{1, 0.9}})};
  const std::string frame = RenderTop(d, {});
  EXPECT_NE(frame.find("CPU     90.0% busy  (2 cpus)"), std::string::npos) << frame;
}

TEST(TopViewTest, GpuColumnsIgnorePerPipeAndMigSeries) {
  TopData d;
  const std::map<std::string, std::string> gpu = {{"gpu_uuid", "GPU-1"}, {"gpu_index", "0"}};
  auto with = [&gpu](std::string k, std::string v) {
    auto labels = gpu;
    labels[k] = v;
    return labels;
  };
  d.latest = {
      Series("vigil_gpu_memory_used_bytes", "gauge", with("gpu_instance_id", "1"), {{1, 1024}}),
      Series("vigil_gpu_memory_used_bytes", "gauge", gpu, {{1, 2048}}),
      Series("vigil_gpu_sm_active_ratio", "gauge", gpu, {{1, 0.25}})};
  const std::string frame = RenderTop(d, {});
  EXPECT_NE(frame.find("2.0 KiB"), std::string::npos) << frame;
  EXPECT_EQ(frame.find("1.0 KiB"), std::string::npos) << frame;
  EXPECT_NE(frame.find("25.0%"), std::string::npos) << frame;
}

TEST(TopViewTest, SaysSoWhenThereIsNoGpu) {
  TopData d;
  d.status = nlohmann::json::parse(
      R"({"collectors":[{"name":"gpu_devices","state":"absent","message":"no libnvidia-ml"}]})");
  const std::string frame = RenderTop(d, {});
  EXPECT_NE(frame.find("no host metrics yet"), std::string::npos);
  EXPECT_NE(frame.find("GPU     none reported by this host (gpu_devices absent: no libnvidia-ml)"),
            std::string::npos)
      << frame;
}

// The collector labels temperatures by sensor: the die's ("gpu") is the TEMP column.
TEST(TopViewTest, GpuTemperatureIsTheDieSensor) {
  TopData d;
  const std::map<std::string, std::string> gpu = {{"gpu_uuid", "GPU-1"}, {"gpu_index", "0"}};
  auto with = [&gpu](std::string v) {
    auto labels = gpu;
    labels["sensor"] = v;
    return labels;
  };
  d.latest = {Series("vigil_gpu_temperature_celsius", "gauge", with("memory"), {{1, 71}}),
              Series("vigil_gpu_temperature_celsius", "gauge", with("gpu"), {{1, 64}})};
  const std::string frame = RenderTop(d, {});
  EXPECT_NE(frame.find("64 C"), std::string::npos) << frame;
  EXPECT_EQ(frame.find("71 C"), std::string::npos) << frame;
}

}  // namespace
}  // namespace vigil
