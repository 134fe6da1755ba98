// SPDX-License-Identifier: Apache-2.0
// The perf_pmu collector's cost per Collect() tick: on this host's kernel (software events where
// there is no hardware PMU, the default presets where there is), and the collector's own work
// (aggregation, labels) on the Intel fixture host with a scripted PerfEventSys.
#include <unistd.h>

#include <cstring>
#include <map>
#include <vector>

#include <benchmark/benchmark.h>

#include "collectors/perf_pmu_collector.h"

namespace vigil {
namespace {

// Answers every group read with growing counts; opens always succeed.
class CountingPerfEventSys : public PerfEventSys {
 public:
  int PerfEventOpen(const perf_event_attr&, pid_t, int, int group_fd, unsigned long) override {
    const int fd = next_fd_++;
    ++sizes_[group_fd < 0 ? fd : group_fd];
    return fd;
  }
  ssize_t Read(int fd, void* buf, size_t size) override {
    const uint64_t k = ++reads_[fd];
    words_.assign({sizes_[fd], k * 1000, k * 500});
    for (uint64_t i = 0; i < sizes_[fd]; ++i) {
      words_.push_back(k * (i + 1) * 100);
    }
    const size_t bytes = std::min(size, words_.size() * sizeof(uint64_t));
    std::memcpy(buf, words_.data(), bytes);
    return static_cast<ssize_t>(bytes);
  }
  int Ioctl(int, unsigned long, unsigned long) override { return 0; }
  int OpenDirectory(const std::string&) override { return -1; }
  void Close(int) override {}

 private:
  std::map<int, uint64_t> sizes_;
  std::map<int, uint64_t> reads_;
  std::vector<uint64_t> words_;
  int next_fd_ = 100;
};

void Tick(benchmark::State& state, PerfPmuCollector& collector) {
  MetricBatch first;
  MetricWriter w(&first);
  Status s = collector.Collect(w);  // Opens the events.
  if (!s.ok() && s.code() != StatusCode::kNotFound) {
    state.SkipWithError(s.ToString().c_str());
    return;
  }
  size_t samples = 0;
  for (auto _ : state) {
    MetricBatch batch;
    batch.samples.reserve(first.samples.size());
    MetricWriter writer(&batch);
    Status tick = collector.Collect(writer);
    benchmark::DoNotOptimize(tick);
    samples = batch.samples.size();
  }
  state.counters["samples"] = static_cast<double>(samples);
  state.counters["groups"] =
      collector.counters() ? static_cast<double>(collector.counters()->groups()) : 0;
}

void BM_PerfPmuCollectThisHost(benchmark::State& state) {
  if (geteuid() != 0) {
    state.SkipWithError("CPU-wide perf events need root or CAP_PERFMON");
    return;
  }
  PerfPmuCollector::Options options;
  PerfPmuCollector collector(options);
  Tick(state, collector);
}
BENCHMARK(BM_PerfPmuCollectThisHost);

void BM_PerfPmuCollectIntelFixtureScripted(benchmark::State& state) {
  CountingPerfEventSys sys;
  PerfPmuCollector::Options options;
  const std::string root = std::string(VIGIL_TEST_DATA_DIR) + "/pmu/intel_host";
  options.paths.proc_root = root + "/proc";
  options.paths.sys_root = root + "/sys";
  options.sys = &sys;
  PerfPmuCollector collector(options);
  Tick(state, collector);
}
BENCHMARK(BM_PerfPmuCollectIntelFixtureScripted);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
