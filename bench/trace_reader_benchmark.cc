// SPDX-License-Identifier: Apache-2.0
// Trace reader throughput: exact microsecond parsing, and reading + analysing a vendored sample
// trace (bytes/s counts the uncompressed JSON).
#include <string>

#include <benchmark/benchmark.h>

#include "trace/analyzer.h"
#include "trace/model/linker.h"
#include "trace/reader/decimal_time.h"
#include "trace/reader/kineto_reader.h"

namespace vigil::trace {
namespace {

void BM_ParseMicrosToNanos(benchmark::State& state) {
  const std::string_view values[] = {"1419247332972.313", "1661203462598738", "4.526", "0.5"};
  int64_t ns = 0;
  bool frac = false;
  for (auto _ : state) {
    for (std::string_view v : values) {
      ParseMicrosToNanos(v, &ns, &frac);
      benchmark::DoNotOptimize(ns);
    }
  }
  state.SetItemsProcessed(state.iterations() * 4);
}
BENCHMARK(BM_ParseMicrosToNanos);

void BM_ReadAndAnalyzeSample(benchmark::State& state) {
  std::string path = std::string(VIGIL_TEST_DATA_DIR) + "/traces/nccl_sampled_rank-0.json.gz";
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto traces = ReadTraces(path);
    if (!traces.ok()) {
      state.SkipWithError(traces.status().ToString().c_str());
      return;
    }
    Report report = Analyze(*traces, AnalysisConfig());
    benchmark::DoNotOptimize(report.ranks.size());
    bytes += (*traces)[0].quality.bytes_read;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_ReadAndAnalyzeSample)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil::trace

BENCHMARK_MAIN();
