// SPDX-License-Identifier: Apache-2.0
// The ROCm SMI backend against the fake librocm_smi64.so.7 (tests/fakes), loaded by path.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "collectors/gpu_collector.h"
#include "gpu/gpu_backend.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;

const Sample* Find(const MetricBatch& b, std::string_view name, const Labels& match = {}) {
  for (const Sample& s : b.samples) {
    if (s.desc->name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) ok &= LabelValue(s.labels, k) == v;
    if (ok) return &s;
  }
  return nullptr;
}

class FakeRocmTest : public ::testing::TestWithParam<int> {};

TEST_P(FakeRocmTest, ScriptedValuesAndNoFlopsEstimate) {
  char path[] = "/tmp/vigil-fake-rsmi-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string script =
      "gpus 2\nversion_major " + std::to_string(GetParam()) +
      "\ngpu 0 unique_id 3735928559\ngpu 0 busy 10 88\ngpu 0 membusy 30\n"
      "gpu 0 vram_total 206158430208\ngpu 0 vram_used 100000000000\ngpu 0 power_uw 650000000\n"
      "gpu 0 energy_count 1000000 1500000\ngpu 0 energy_res_uj 15.3\ngpu 0 temp_edge_mc 51000\n"
      "gpu 0 temp_mem_mc 62000\ngpu 0 sclk_hz 2100000000 1900000000\ngpu 0 mclk_hz 1300000000\n"
      "gpu 0 procs 5151:4000000000\n";
  ASSERT_EQ(write(fd, script.data(), script.size()), static_cast<ssize_t>(script.size()));
  close(fd);
  setenv("FAKE_RSMI_SCRIPT", path, 1);
  GpuBackendOptions options;
  options.backend = "amd";
  options.amd_library = std::string(VIGIL_FAKE_ROCM_DIR) + "/librocm_smi64.so.7";
  int64_t mono = 0;
  GpuCollectorConfig c;
  c.make_backend = [options] { return CreateGpuBackend(options); };
  c.monotonic_ns = [&mono] { return mono; };
  c.unix_ns = [&mono] { return mono; };
  {
    GpuCollector collector(std::move(c));
    MetricBatch b;
    for (int i = 0; i < 2; ++i) {
      b = MetricBatch{};
      MetricWriter w(&b);
      ASSERT_TRUE(collector.Collect(w).ok());
      mono += 2 * kSec;
    }
    const Labels g0 = {{"gpu_uuid", "AMD-00000000deadbeef"}};
    ASSERT_NE(Find(b, "vigil_gpu_up", g0), nullptr);
    EXPECT_EQ(LabelValue(Find(b, "vigil_gpu_up", g0)->labels, "gpu_model"), "MI300X");
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_utilization_ratio", g0)->value, 0.88);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_memory_used_bytes", g0)->value, 1e11);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_power_watts", g0)->value, 650.0);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_temperature_celsius", {g0[0], {"sensor", "memory"}})->value,
                     62);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_sm_clock_hertz", g0)->value, 1.9e9);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_memory_clock_hertz", g0)->value, 1.3e9);
    EXPECT_EQ(LabelValue(Find(b, "vigil_gpu_info", g0)->labels, "pci_bus_id"), "00000000:0C:00.0");
    // Energy counter: (1.5e6 - 1e6) x 15.3 uJ = 7.65 J.
    EXPECT_NEAR(Find(b, "vigil_gpu_energy_joules_total", g0)->value, 7.65, 1e-3);
    EXPECT_DOUBLE_EQ(
        Find(b, "vigil_gpu_process_memory_used_bytes", {g0[0], {"pid", "5151"}})->value, 4e9);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_allocated_seconds_total", g0)->value, 2.0);
    EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_busy_seconds_total", g0)->value, 2.0 * 0.88);
    // No pipe activity from ROCm SMI: no estimate, and the backend says so.
    EXPECT_EQ(Find(b, "vigil_gpu_flops_estimated"), nullptr);
    EXPECT_EQ(LabelValue(Find(b, "vigil_gpu_backend_info")->labels, "flops_estimate"),
              "unavailable");
    EXPECT_NE(collector.Describe().find("no FLOP/s estimate"), std::string::npos);
    EXPECT_EQ(Find(b, "vigil_gpu_up", {{"gpu_uuid", "AMD-index-1"}})->value, 1);
  }
  unlink(path);
}

INSTANTIATE_TEST_SUITE_P(FrequencyLayouts, FakeRocmTest, ::testing::Values(5, 6));

}  // namespace
}  // namespace vigil
