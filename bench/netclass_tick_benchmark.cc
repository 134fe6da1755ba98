// SPDX-License-Identifier: Apache-2.0
// sys_netclass's Collect() tick on this host, from the rtnetlink dump (what vigild does on its own
// /sys) and from sysfs alone (what it does on another tree), back to back in one run: hot, tick
// after tick, and cold, after 200 ms idle between ticks as a daemon's 1 s ticks are (caches and
// TLB lost to whatever ran in between). Labels say how many series a tick wrote.
#include <unistd.h>

#include <string>

#include <benchmark/benchmark.h>

#include "collectors/sys_netclass_collector.h"

namespace vigil {
namespace {

void RunTick(benchmark::State& state, SysNetclassCollector::Source source, bool cold) {
  SysNetclassCollector collector(HostPaths{}, RescanSchedule::kDefaultEvery, source);
  if (source == SysNetclassCollector::Source::kAuto && !collector.ReadsNetlink()) {
    state.SkipWithError("rtnetlink is refused here");
    return;
  }
  size_t series = 0;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      usleep(200000);
      state.ResumeTiming();
    }
    MetricBatch batch;
    MetricWriter writer(&batch);
    const Status s = collector.Collect(writer);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    series = batch.samples.size();
  }
  state.SetLabel(std::to_string(series) + " series");
}

void BM_NetclassTick_Netlink(benchmark::State& state) {
  RunTick(state, SysNetclassCollector::Source::kAuto, false);
}
void BM_NetclassTick_Sysfs(benchmark::State& state) {
  RunTick(state, SysNetclassCollector::Source::kSysfs, false);
}
void BM_NetclassColdTick_Netlink(benchmark::State& state) {
  RunTick(state, SysNetclassCollector::Source::kAuto, true);
}
void BM_NetclassColdTick_Sysfs(benchmark::State& state) {
  RunTick(state, SysNetclassCollector::Source::kSysfs, true);
}
BENCHMARK(BM_NetclassTick_Netlink);
BENCHMARK(BM_NetclassTick_Sysfs);
BENCHMARK(BM_NetclassColdTick_Netlink)->Iterations(40);
BENCHMARK(BM_NetclassColdTick_Sysfs)->Iterations(40);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
