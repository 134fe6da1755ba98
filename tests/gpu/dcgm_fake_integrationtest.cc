// SPDX-License-Identifier: Apache-2.0
// The DCGM backend (fake libnvidia-ml.so.1 for telemetry + fake libdcgm.so.4 for profiling fields),
// both loaded by path through dlopen.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "collectors/gpu_collector.h"
#include "gpu/gpu_backend.h"
#include "gpu/profiling_control.h"

namespace vigil {
namespace {

const Sample* Find(const MetricBatch& b, std::string_view name, const Labels& match = {}) {
  for (const Sample& s : b.samples) {
    if (s.desc->name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) ok &= LabelValue(s.labels, k) == v;
    if (ok) return &s;
  }
  return nullptr;
}

std::string Write(const std::string& text) {
  char path[] = "/tmp/vigil-fake-dcgm-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

class FakeDcgmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ResumeGpuProfiling().ok());
    nvml_script_ = Write("gpus 1\ngpu 0 name Tesla V100-SXM2-16GB\ngpu 0 sm_clock 1530\n");
    setenv("FAKE_NVML_SCRIPT", nvml_script_.c_str(), 1);
    unsetenv("FAKE_NVML_INIT_FAILURES_DONE");
  }
  void TearDown() override {
    ASSERT_TRUE(ResumeGpuProfiling().ok());
    unlink(nvml_script_.c_str());
    if (!dcgm_script_.empty()) unlink(dcgm_script_.c_str());
  }
  GpuBackendOptions Options(const std::string& dcgm_script, bool embedded) {
    dcgm_script_ = Write(dcgm_script);
    setenv("FAKE_DCGM_SCRIPT", dcgm_script_.c_str(), 1);
    GpuBackendOptions o;
    o.backend = "dcgm";
    o.nvml_library = std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
    o.dcgm_library = std::string(VIGIL_FAKE_DCGM_DIR) + "/libdcgm.so.4";
    o.dcgm_embedded = embedded;
    return o;
  }
  std::string nvml_script_, dcgm_script_;
};

constexpr const char* kFields =
    "gpu 0 field 1002 0.9\ngpu 0 field 1003 0.45\ngpu 0 field 1014 0.5\ngpu 0 field 1007 0.25\n"
    "gpu 0 field 1005 0.3\ngpu 0 field 1011 1000000\n";

TEST_F(FakeDcgmTest, ProfilingFieldsFeedTheFlopsEstimateAndPauseHidesThem) {
  GpuBackendOptions options = Options(std::string("hostengine 1\n") + kFields, false);
  int64_t mono = 0;
  GpuCollectorConfig c;
  c.make_backend = [options] { return CreateGpuBackend(options); };
  c.monotonic_ns = [&mono] { return mono += 1'000'000'000; };
  c.unix_ns = [&mono] { return mono; };
  GpuCollector collector(std::move(c));
  MetricBatch b;
  auto tick = [&] {
    b = MetricBatch{};
    MetricWriter w(&b);
    return collector.Collect(w);
  };
  ASSERT_TRUE(tick().ok());
  // V100: 80 SMs x 1530 MHz x (0.5 x 1024 HMMA + 0.25 x 128 FP32) = 66.5856e12 FLOP/s.
  ASSERT_NE(Find(b, "vigil_gpu_flops_estimated"), nullptr) << collector.Describe();
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_flops_estimated")->value,
                   80 * 1530e6 * (0.5 * 1024 + 0.25 * 128));
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_sm_active_ratio")->value, 0.9);
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_sm_occupancy_ratio")->value, 0.45);
  EXPECT_DOUBLE_EQ(Find(b, "vigil_gpu_nvlink_transmit_bytes_per_second")->value, 1e6);
  EXPECT_NE(collector.Describe().find("(nv-hostengine)"), std::string::npos);

  ASSERT_TRUE(PauseGpuProfiling(300).ok());
  ASSERT_TRUE(tick().ok());
  EXPECT_EQ(Find(b, "vigil_gpu_flops_estimated"), nullptr);
  EXPECT_NE(Find(b, "vigil_gpu_utilization_ratio"), nullptr);  // NVML telemetry continues.
  EXPECT_NE(collector.Describe().find("DCGM profiling paused"), std::string::npos);
  ASSERT_TRUE(ResumeGpuProfiling().ok());
  ASSERT_TRUE(tick().ok());
  EXPECT_NE(Find(b, "vigil_gpu_flops_estimated"), nullptr);
}

TEST_F(FakeDcgmTest, NoHostEngineFailsUnlessEmbeddingIsAsked) {
  auto refused = CreateGpuBackend(Options(std::string("hostengine 0\n") + kFields, false));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("dcgmConnect_v2 127.0.0.1:5555"), std::string::npos);
  unlink(dcgm_script_.c_str());
  auto embedded = CreateGpuBackend(Options(std::string("hostengine 0\n") + kFields, true));
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  EXPECT_NE((*embedded)->Describe().find("(embedded engine)"), std::string::npos);
}

}  // namespace
}  // namespace vigil
