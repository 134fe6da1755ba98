// SPDX-License-Identifier: Apache-2.0
// Cost of one GPU collection cycle for 8 GPUs.
// - BM_GpuCycle_DerivedOnly: the collector with an in-process backend that returns prepared
//   readings: everything Vigil adds (FLOP/s estimate, accounting, label building, samples) and
//   no library time at all. This is the "beyond the library's own time" figure.
// - BM_GpuCycle_FakeNvml: the full NVML path (dlopen'd fake libnvidia-ml.so.1, GPM, process
//   list) plus derived metrics; the fake's own cost is small but not zero.
// Both report us_per_gpu (microseconds per GPU per cycle).
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <benchmark/benchmark.h>

#include "collectors/gpu_collector.h"
#include "gpu/gpu_backend.h"
#include "gpu/sim_backend.h"

namespace vigil {
namespace {

constexpr int kGpus = 8;

class PreparedBackend : public GpuBackend {
 public:
  explicit PreparedBackend(std::vector<GpuReading> readings) : readings_(std::move(readings)) {}
  std::string_view name() const override { return "prepared"; }
  Status Read(std::vector<GpuReading>* out) override {
    *out = readings_;
    return OkStatus();
  }
  std::string Describe() const override { return "prepared"; }

 private:
  std::vector<GpuReading> readings_;
};

void Run(benchmark::State& state, GpuCollectorConfig config) {
  int64_t mono = 0;
  config.monotonic_ns = [&mono] { return mono += 1'000'000'000; };
  config.unix_ns = [&mono] { return mono; };
  GpuCollector collector(std::move(config));
  MetricBatch batch;
  for (auto _ : state) {
    batch.samples.clear();
    MetricWriter w(&batch);
    Status s = collector.Collect(w);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(batch.samples.data());
  }
  state.counters["us_per_gpu"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kGpus * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["samples"] = static_cast<double>(batch.samples.size());
}

void BM_GpuCycle_DerivedOnly(benchmark::State& state) {
  int64_t t = 0;
  SimBackend sim(kGpus, [&t] { return t += 700'000'000; });
  std::vector<GpuReading> readings;
  if (!sim.Read(&readings).ok()) state.SkipWithError("sim read failed");
  for (GpuReading& r : readings) r.simulated_jobs.clear();  // Resolve through the resolver path.
  GpuCollectorConfig config;
  config.make_backend = [readings]() -> StatusOr<std::unique_ptr<GpuBackend>> {
    return std::unique_ptr<GpuBackend>(std::make_unique<PreparedBackend>(readings));
  };
  config.resolve = [](int pid) -> StatusOr<JobInfo> {
    JobInfo info;
    info.job_id = std::to_string(pid / 100000);
    info.user = "alice";
    info.rule = "slurm_cgroup";
    return info;
  };
  Run(state, std::move(config));
}
BENCHMARK(BM_GpuCycle_DerivedOnly);

#ifdef VIGIL_FAKE_NVML_DIR
void BM_GpuCycle_FakeNvml(benchmark::State& state) {
  std::string script = "gpus 8\n";
  for (int i = 0; i < kGpus; ++i) {
    const std::string g = "gpu " + std::to_string(i) + " ";
    script += g + "util 97\n" + g + "memutil 40\n" + g + "mem_used 70000000000\n" + g +
              "mem_reserved 500000000\n" + g + "power_mw 650000\n" + g + "energy_mj 1000 2000\n" +
              g + "mem_temp 60\n" + g + "nvlinks 18\n" + g + "nvlink_tx_kib 1000\n" + g +
              "nvlink_rx_kib 1000\n" + g + "ecc_corr 0\n" + g + "ecc_unc 0\n" + g +
              "remap_corr 0\n" + g + "pcie_tx_kbs 100\n" + g + "pcie_rx_kbs 100\n" + g + "gpm 1\n" +
              g + "gpm_sm_active 90\n" + g + "gpm_sm_occupancy 40\n" + g + "gpm_hmma 60\n" + g +
              "gpm_fp32 5\n" + g + "gpm_dram 50\n" + g + "procs " + std::to_string(1000 + i) +
              ":70000000000\n";
  }
  char path[] = "/tmp/vigil-bench-nvml-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0 || write(fd, script.data(), script.size()) != static_cast<ssize_t>(script.size())) {
    state.SkipWithError("cannot write script");
    return;
  }
  close(fd);
  setenv("FAKE_NVML_SCRIPT", path, 1);
  GpuBackendOptions options;
  options.backend = "nvml";
  options.nvml_library = std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
  GpuCollectorConfig config;
  config.make_backend = [options] { return CreateGpuBackend(options); };
  Run(state, std::move(config));
  unlink(path);
}
BENCHMARK(BM_GpuCycle_FakeNvml);
#endif

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
