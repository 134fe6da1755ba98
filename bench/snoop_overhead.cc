// SPDX-License-Identifier: Apache-2.0
// What vigil snoop's uprobes cost the traced program: this process calls the fake CUDA
// runtime's cudaLaunchKernel with no probes attached and with a session tracing itself (entry
// uprobe, pid filter, in-kernel aggregation per kernel), and runs a loop paced to about 200,000
// launches per second (launch + 5 us of host work) against the same loop without the launch.
// Targets: under 1.5 us added per call and under 10 % slowdown at 200,000 launches/s. Needs
// root; skips each benchmark otherwise.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include <benchmark/benchmark.h>

#include "snoop/snoop_session.h"

extern "C" {
typedef int cudaError_t;
struct dim3 {
  unsigned int x, y, z;
};
cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, struct CUstream_st* stream);
void fake_cudart_use_driver(int on);  // The fake runtime's switch, not a CUDA API.
int cuInit(unsigned int flags);       // Loads the fake driver the runtime then finds.
}

namespace {

__attribute__((noinline)) void bench_kernel(float* x) { asm volatile("" ::"r"(x)); }

// A session tracing this process (probes on the fake runtime), or null without root.
std::unique_ptr<vigil::snoop::SnoopSession> TraceSelf(benchmark::State& state) {
  vigil::snoop::SnoopOptions o;
  o.pids = {static_cast<int>(getpid())};
  o.event_budget_per_second = 0;  // Measure the probes, not the sampler.
  auto s = vigil::snoop::SnoopSession::Start(o);
  if (!s.ok()) {
    state.SkipWithError(s.status().ToString().c_str());
    return nullptr;
  }
  return std::move(*s);
}

inline void Launch() {
  float buf[4] = {};
  void* args[] = {buf};
  cudaLaunchKernel(reinterpret_cast<const void*>(&bench_kernel), dim3{1, 1, 1}, dim3{32, 1, 1},
                   args, 0, nullptr);
}

// Host work between launches so that one iteration takes about 5 us without probes.
__attribute__((noinline)) void HostWork(uint64_t spins) {
  for (uint64_t i = 0; i < spins; ++i) asm volatile("" ::"r"(i));
}

// This thread's CPU time: the probes' cost (the trap, the BPF program) is charged to the
// traced thread, and a loaded machine's waiting is not.
double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// The fastest of several trials: a trial the hypervisor or an interrupt slowed would make the
// loop shorter than 5 us and the slowdown look larger.
uint64_t SpinsFor5us() {
  static uint64_t spins = [] {
    constexpr uint64_t kTry = 2'000'000;
    double fastest_ns = 0;
    for (int trial = 0; trial < 7; ++trial) {
      double start = ThreadCpuNs();
      HostWork(kTry);
      double ns = ThreadCpuNs() - start;
      if (trial == 0 || ns < fastest_ns) fastest_ns = ns;
    }
    return static_cast<uint64_t>(kTry * (5000.0 / fastest_ns));
  }();
  return spins;
}

// through_driver 1: the runtime's launch calls the driver's cuLaunchKernel, as NVIDIA's runtime
// does through the driver API; that nested call is probed too (a second trap) and not counted.
void BM_CudaLaunchKernel(benchmark::State& state) {
  cuInit(0);
  fake_cudart_use_driver(static_cast<int>(state.range(1)));
  std::unique_ptr<vigil::snoop::SnoopSession> session;
  if (state.range(0) == 1 && !(session = TraceSelf(state))) return;
  for (auto _ : state) Launch();
  state.SetItemsProcessed(state.iterations());
  if (session) {
    vigil::snoop::SessionSummary s = session->Snapshot();
    uint64_t counted = s.processes.empty() ? 0 : s.processes[0].launches_total;
    state.counters["launches_counted"] = static_cast<double>(counted);
  }
}
BENCHMARK(BM_CudaLaunchKernel)
    ->ArgNames({"probed", "through_driver"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({1, 1});

// The paced loop, with and without the launch, in alternating 1 ms chunks under one session:
// a host whose speed drifts (a busy hypervisor) slows both halves alike, so the ratio holds
// where two separate runs seconds apart would each measure a different machine. The chunk
// without the launch also skips the fake's few nanoseconds, so the figure errs high.
void BM_Paced200kLaunchesPerSecond(benchmark::State& state) {
  cuInit(0);
  fake_cudart_use_driver(static_cast<int>(state.range(0)));
  std::unique_ptr<vigil::snoop::SnoopSession> session = TraceSelf(state);
  if (!session) return;
  constexpr int kChunk = 200;  // 200 x 5 us
  uint64_t spins = SpinsFor5us();
  double probed_ns = 0, unprobed_ns = 0;
  for (auto _ : state) {
    double t0 = ThreadCpuNs();
    for (int i = 0; i < kChunk; ++i) HostWork(spins);
    double t1 = ThreadCpuNs();
    for (int i = 0; i < kChunk; ++i) {
      Launch();
      HostWork(spins);
    }
    double t2 = ThreadCpuNs();
    unprobed_ns += t1 - t0;
    probed_ns += t2 - t1;
  }
  // The loop's length drifts with the host's speed since it was calibrated; the slowdown at
  // 200,000/s is the time each launch added over the 5 us a launch has at that rate.
  double launches = static_cast<double>(state.iterations()) * kChunk;
  double added_ns = (probed_ns - unprobed_ns) / launches;
  state.counters["loop_us"] = unprobed_ns / launches / 1e3;
  state.counters["added_ns_per_launch"] = added_ns;
  state.counters["loop_slowdown_pct"] = 100.0 * (probed_ns / unprobed_ns - 1.0);
  state.counters["slowdown_at_200k_pct"] = 100.0 * added_ns / 5000.0;
}
BENCHMARK(BM_Paced200kLaunchesPerSecond)->ArgName("through_driver")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
