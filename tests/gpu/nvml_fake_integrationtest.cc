// SPDX-License-Identifier: Apache-2.0
// The NVML backend and the GPU collector against the fake libnvidia-ml.so.1 (tests/fakes), loaded
// through the real dlopen path: by file path (--nvml-library) in-process, and by soname through
// LD_LIBRARY_PATH in a child process (the loader reads LD_LIBRARY_PATH only at start-up).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "collectors/gpu_collector.h"
#include "gpu/gpu_backend.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;
const std::string kFakeNvml = std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
const std::string kOldNvml = std::string(VIGIL_FAKE_NVML_OLD_DIR) + "/libnvidia-ml.so.1";

constexpr const char* kMainScript = R"(gpus 2
driver 550.54.15
gpu 0 name NVIDIA H100 80GB HBM3
gpu 0 uuid GPU-11111111-2222-3333-4444-555555555555
gpu 0 util 10 42 77
gpu 0 memutil 5 20 30
gpu 0 mem_total 85899345920
gpu 0 mem_used 1073741824 42949672960
gpu 0 mem_reserved 536870912
gpu 0 power_mw 100000 400000 500000
gpu 0 energy_mj 1000000 1500000 2100000
gpu 0 temp 40 55 61
gpu 0 mem_temp 45 60 70
gpu 0 sm_clock 1980 1755
gpu 0 mem_clock 2619
gpu 0 reasons 0 4 68
gpu 0 pcie_tx_kbs 1000
gpu 0 pcie_rx_kbs 2000
gpu 0 nvlinks 4
gpu 0 nvlink_tx_kib 100 200
gpu 0 nvlink_rx_kib 300 400
gpu 0 ecc_corr 0 2
gpu 0 ecc_unc 0 1
gpu 0 remap_corr 1
gpu 0 remap_unc 0
gpu 0 remap_pending 0 1
gpu 0 remap_failure 0
gpu 0 gpm 1
gpu 0 gpm_sm_active 80
gpu 0 gpm_sm_occupancy 40
gpu 0 gpm_hmma 50
gpu 0 gpm_fp32 10
gpu 0 gpm_dram 25
gpu 0 procs 4242:1000000 4242:42000000000,4243:1000
gpu 1 name NVIDIA A100-SXM4-80GB
gpu 1 uuid GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee
gpu 1 util 0
gpu 1 mig 1
gpu 1 mig_instances 2
)";

std::string WriteScript(const std::string& text) {
  char path[] = "/tmp/vigil-fake-nvml-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

const Sample* Find(const MetricBatch& batch, std::string_view name, const Labels& match = {}) {
  for (const Sample& s : batch.samples) {
    if (s.desc->name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) ok &= LabelValue(s.labels, k) == v;
    if (ok) return &s;
  }
  return nullptr;
}

double Value(const MetricBatch& batch, std::string_view name, const Labels& match = {}) {
  const Sample* s = Find(batch, name, match);
  EXPECT_NE(s, nullptr) << name;
  return s ? s->value : -1;
}

// One collector over a fake library, with a fake monotonic clock advanced 1 s per tick.
class FakeNvmlTest : public ::testing::Test {
 protected:
  void Start(const std::string& script, const std::string& library) {
    script_ = WriteScript(script);
    setenv("FAKE_NVML_SCRIPT", script_.c_str(), 1);
    unsetenv("FAKE_NVML_INIT_FAILURES_DONE");
    GpuBackendOptions options;
    options.backend = "nvml";
    options.nvml_library = library;
    GpuCollectorConfig c;
    c.make_backend = [options] { return CreateGpuBackend(options); };
    c.monotonic_ns = [this] { return mono_; };
    c.unix_ns = [this] { return mono_; };
    c.retry_init_ns = 5 * kSec;
    collector_ = std::make_unique<GpuCollector>(std::move(c));
  }
  Status Tick() {
    batch_ = MetricBatch{};
    MetricWriter w(&batch_);
    Status s = collector_->Collect(w);
    mono_ += kSec;
    return s;
  }
  void TearDown() override {
    collector_.reset();
    if (!script_.empty()) unlink(script_.c_str());
  }

  std::string script_;
  int64_t mono_ = 10 * kSec;
  std::unique_ptr<GpuCollector> collector_;
  MetricBatch batch_;
};

TEST_F(FakeNvmlTest, ScriptedValuesReachEveryMetricByLibraryPath) {
  Start(kMainScript, kFakeNvml);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Tick().ok()) << i;
  const Labels g0 = {{"gpu_uuid", "GPU-11111111-2222-3333-4444-555555555555"}};
  EXPECT_EQ(LabelValue(Find(batch_, "vigil_gpu_info", g0)->labels, "pci_bus_id"),
            "00000000:18:00.0");
  EXPECT_EQ(LabelValue(Find(batch_, "vigil_gpu_up", g0)->labels, "gpu_model"), "H100 SXM");
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_utilization_ratio", g0), 0.77);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_memory_utilization_ratio", g0), 0.30);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_memory_used_bytes", g0), 42949672960.0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_memory_reserved_bytes", g0), 536870912.0);  // _v2
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_power_watts", g0), 500.0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_temperature_celsius", {g0[0], {"sensor", "gpu"}}), 61);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_temperature_celsius", {g0[0], {"sensor", "memory"}}),
                   70);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_sm_clock_hertz", g0), 1755e6);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_memory_clock_hertz", g0), 2619e6);
  EXPECT_EQ(
      Value(batch_, "vigil_gpu_clock_event_reason_active", {g0[0], {"reason", "sw_power_cap"}}), 1);
  EXPECT_EQ(Value(batch_, "vigil_gpu_clock_event_reason_active",
                  {g0[0], {"reason", "hw_thermal_slowdown"}}),
            1);
  EXPECT_EQ(Value(batch_, "vigil_gpu_clock_event_reason_active", {g0[0], {"reason", "gpu_idle"}}),
            0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_pcie_transmit_bytes_per_second", g0), 1000 * 1024.0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_nvlink_transmit_bytes_total", {g0[0], {"link", "3"}}),
                   (200 + 3) * 1024.0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_nvlink_receive_bytes_total", {g0[0], {"link", "0"}}),
                   400 * 1024.0);
  EXPECT_EQ(Find(batch_, "vigil_gpu_nvlink_up", {g0[0], {"link", "4"}}), nullptr);
  EXPECT_EQ(Value(batch_, "vigil_gpu_ecc_errors_total", {g0[0], {"type", "corrected"}}), 2);
  EXPECT_EQ(Value(batch_, "vigil_gpu_ecc_errors_total", {g0[0], {"type", "uncorrected"}}), 1);
  EXPECT_EQ(Value(batch_, "vigil_gpu_remapped_rows", {g0[0], {"kind", "correctable"}}), 1);
  EXPECT_EQ(Value(batch_, "vigil_gpu_row_remap_pending", g0), 1);
  EXPECT_EQ(Value(batch_, "vigil_gpu_mig_enabled", g0), 0);
  // GPM (second sample onwards): hand computation 132 x 1755e6 x (0.5 x 4096 + 0.1 x 256).
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_flops_estimated", g0), 480.370176e12);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_sm_active_ratio", g0), 0.80);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_sm_occupancy_ratio", g0), 0.40);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_memory_bandwidth_used_bytes_per_second", g0),
                   0.25 * 3.35e12);
  // Processes (24-byte _v3 entries) and their accounting: 2 s of wall time, energy from the
  // counter (1000 J -> 2100 J).
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_process_memory_used_bytes", {g0[0], {"pid", "4242"}}),
                   42e9);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_process_memory_used_bytes", {g0[0], {"pid", "4243"}}),
                   1000);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_allocated_seconds_total", g0), 2.0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_busy_seconds_total", g0), 1.6);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_energy_joules_total", g0), 1100.0);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_job_gpu_energy_joules_total", g0), 1100.0);
  // GPU 1: MIG with two instances, no GPM -> no FLOP/s estimate.
  const Labels g1 = {{"gpu_uuid", "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}};
  EXPECT_EQ(Value(batch_, "vigil_gpu_mig_enabled", g1), 1);
  EXPECT_NE(Find(batch_, "vigil_gpu_mig_instance_info",
                 {g1[0], {"mig_uuid", "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee-1"}}),
            nullptr);
  EXPECT_EQ(Find(batch_, "vigil_gpu_flops_estimated", g1), nullptr);
  EXPECT_EQ(LabelValue(Find(batch_, "vigil_gpu_up", g1)->labels, "gpu_model"), "A100 SXM4 80GB");
  EXPECT_NE(collector_->Describe().find("driver 550.54.15"), std::string::npos);
}

class StrideVariantTest : public FakeNvmlTest, public ::testing::WithParamInterface<int> {};

TEST_P(StrideVariantTest, ProcessListDecodesWhateverStrideTheDriverWrites) {
  Start("gpus 1\nproc_stride " + std::to_string(GetParam()) +
            "\ngpu 0 procs 101:1048576,202:2097152,303:6498025472\n",
        kFakeNvml);
  ASSERT_TRUE(Tick().ok());
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_process_memory_used_bytes", {{"pid", "101"}}), 1048576);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_process_memory_used_bytes", {{"pid", "202"}}), 2097152);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_process_memory_used_bytes", {{"pid", "303"}}),
                   6498025472);
}

INSTANTIATE_TEST_SUITE_P(Drivers, StrideVariantTest, ::testing::Values(16, 24, 32));

// nvmlDeviceGetProcessUtilization: only processes active in the period have a sample, and only
// samples newer than the last read count; a listed process without one had 0%.
TEST_F(FakeNvmlTest, ProcessSmShareComesFromTheNewestSampleOfEachTick) {
  Start("gpus 1\ngpu 0 util 50\ngpu 0 procs 101:1:40,202:2 101:1:60,202:2:10 101:1,202:2\n",
        kFakeNvml);
  const char* kName = "vigil_gpu_process_sm_utilization_ratio";
  ASSERT_TRUE(Tick().ok());
  EXPECT_DOUBLE_EQ(Value(batch_, kName, {{"pid", "101"}}), 0.40);
  EXPECT_DOUBLE_EQ(Value(batch_, kName, {{"pid", "202"}}), 0.0);
  ASSERT_TRUE(Tick().ok());
  EXPECT_DOUBLE_EQ(Value(batch_, kName, {{"pid", "101"}}), 0.60);
  EXPECT_DOUBLE_EQ(Value(batch_, kName, {{"pid", "202"}}), 0.10);
  ASSERT_TRUE(Tick().ok());  // No process active: NVML_ERROR_NOT_FOUND.
  EXPECT_DOUBLE_EQ(Value(batch_, kName, {{"pid", "101"}}), 0.0);
  EXPECT_DOUBLE_EQ(Value(batch_, kName, {{"pid", "202"}}), 0.0);
}

TEST_F(FakeNvmlTest, OldDriverWorksWithoutNewerSymbols) {
  Start(kMainScript, kOldNvml);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Tick().ok());
  const Labels g0 = {{"gpu_uuid", "GPU-11111111-2222-3333-4444-555555555555"}};
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_memory_used_bytes", g0), 42949672960.0);  // v1 struct
  EXPECT_EQ(Find(batch_, "vigil_gpu_memory_reserved_bytes", g0), nullptr);
  EXPECT_EQ(
      Value(batch_, "vigil_gpu_clock_event_reason_active", {g0[0], {"reason", "sw_power_cap"}}), 1);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_process_memory_used_bytes", {g0[0], {"pid", "4242"}}),
                   42e9);
  EXPECT_EQ(Find(batch_, "vigil_gpu_flops_estimated"), nullptr);  // No GPM symbols.
  EXPECT_EQ(Find(batch_, "vigil_gpu_remapped_rows"), nullptr);
  const std::string d = collector_->Describe();
  EXPECT_NE(d.find("missing symbols"), std::string::npos) << d;
  EXPECT_NE(d.find("nvmlGpmMetricsGet"), std::string::npos) << d;
}

TEST_F(FakeNvmlTest, LostGpuIsReportedAndRecovers) {
  Start("gpus 2\ngpu 1 lost 0 1 1 0\ngpu 1 util 50\ngpu 1 procs 77:1\n", kFakeNvml);
  ASSERT_TRUE(Tick().ok());
  const Labels g1 = {{"gpu_index", "1"}};
  EXPECT_EQ(Value(batch_, "vigil_gpu_up", g1), 1);
  for (int i = 0; i < 2; ++i) {
    Status s = Tick();
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_NE(s.message().find("GPU-fa6e0000-0000-4000-8000-000000000001"), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("NVML_ERROR_GPU_IS_LOST"), std::string::npos) << s.message();
    EXPECT_EQ(Value(batch_, "vigil_gpu_up", g1), 0);
    EXPECT_EQ(Value(batch_, "vigil_gpu_up", {{"gpu_index", "0"}}), 1);
  }
  EXPECT_TRUE(Tick().ok());
  EXPECT_EQ(Value(batch_, "vigil_gpu_up", g1), 1);
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_utilization_ratio", g1), 0.5);
  // Three intervals of 1 s; the two lost ones are not allocated.
  EXPECT_DOUBLE_EQ(Value(batch_, "vigil_gpu_allocated_seconds_total",
                         {{"gpu_uuid", "GPU-fa6e0000-0000-4000-8000-000000000001"}}),
                   1.0);
}

TEST_F(FakeNvmlTest, InitFailureIsReportedAndRetried) {
  Start("gpus 1\ninit_fail 9 1\n", kFakeNvml);  // NVML_ERROR_DRIVER_NOT_LOADED once.
  Status s = Tick();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("nvmlInit"), std::string::npos);
  mono_ += 5 * kSec;
  EXPECT_TRUE(Tick().ok());
  EXPECT_EQ(Value(batch_, "vigil_gpu_up"), 1);
}

TEST_F(FakeNvmlTest, XidEventsAreCountedFromTheEventThread) {
  Start("gpus 1\ngpu 0 xid 0 0 79 0\n", kFakeNvml);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  double count = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(Tick().ok());
    count = Value(batch_, "vigil_gpu_xid_errors_total");
    if (count >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(count, 1);
  EXPECT_EQ(Value(batch_, "vigil_gpu_last_xid"), 79);
}

TEST(LoadNvmlBySonameTest, LdLibraryPathFindsTheFakeAndNoneMeansAbsent) {
  const std::string script = WriteScript(kMainScript);
  std::string out_path = script + ".out";
  auto run = [&](const std::string& ld_path) {
    const std::string cmd = std::string("LD_LIBRARY_PATH=") + ld_path +
                            " FAKE_NVML_SCRIPT=" + script + " " + VIGIL_GPU_PROBE +
                            " --backend nvml --ticks 3 --interval-ms 1 > " + out_path + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(out_path);
    return std::make_pair(rc, std::string(std::istreambuf_iterator<char>(in), {}));
  };
  auto [rc, out] = run(VIGIL_FAKE_NVML_DIR);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("vigil_gpu_utilization_ratio{gpu_index=\"0\",gpu_model=\"H100 SXM\","
                     "gpu_uuid=\"GPU-11111111-2222-3333-4444-555555555555\"} 0.77"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("backend: nvml libnvidia-ml.so.1 driver 550.54.15"), std::string::npos) << out;
  // With an empty directory first and no real driver on the host, the soname is not found.
  if (access("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", F_OK) != 0) {
    auto [rc2, out2] = run("/nonexistent");
    EXPECT_NE(rc2, 0);
    EXPECT_NE(out2.find("NOT_FOUND: dlopen libnvidia-ml.so.1"), std::string::npos) << out2;
  }
  unlink(out_path.c_str());
  unlink(script.c_str());
}

}  // namespace
}  // namespace vigil
