// SPDX-License-Identifier: Apache-2.0
// What vigil snoop's uprobes cost the traced program: this process calls the fake CUDA
// runtime's cudaLaunchKernel with no probes attached and with a session tracing itself (entry
// uprobe, pid filter, in-kernel aggregation per kernel), and runs a loop paced to about 200,000
// launches per second (launch + fixed host work) both ways. Targets: under 1.5 us added per call
// and under 10 % slowdown at 200,000 launches/s. Needs root; skips each benchmark otherwise.
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

uint64_t SpinsFor5us() {
  static uint64_t spins = [] {
    constexpr uint64_t kTry = 10'000'000;
    double start = ThreadCpuNs();
    HostWork(kTry);
    return static_cast<uint64_t>(kTry * (5000.0 / (ThreadCpuNs() - start)));
  }();
  return spins;
}

double g_unprobed_paced_ns = 0;

void BM_CudaLaunchKernel(benchmark::State& state) {
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
BENCHMARK(BM_CudaLaunchKernel)->ArgName("probed")->Arg(0)->Arg(1);

void BM_Paced200kLaunchesPerSecond(benchmark::State& state) {
  std::unique_ptr<vigil::snoop::SnoopSession> session;
  if (state.range(0) == 1 && !(session = TraceSelf(state))) return;
  uint64_t spins = SpinsFor5us();
  double start = ThreadCpuNs();
  for (auto _ : state) {
    Launch();
    HostWork(spins);
  }
  double ns = (ThreadCpuNs() - start) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
  state.counters["launches_per_s"] = 1e9 / ns;
  if (state.range(0) == 0) {
    g_unprobed_paced_ns = ns;
  } else if (g_unprobed_paced_ns > 0) {
    state.counters["slowdown_pct"] = 100.0 * (ns / g_unprobed_paced_ns - 1.0);
  }
}
BENCHMARK(BM_Paced200kLaunchesPerSecond)->ArgName("probed")->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
