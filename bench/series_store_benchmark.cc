// SPDX-License-Identifier: Apache-2.0
// Series store costs on the daemon's hot paths: appending one tick of 1,000 series, answering
// "latest" for everything, an hour-long range of one series, and the raw codec throughput.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "metrics/gorilla_block.h"
#include "metrics/series_store.h"

namespace vigil {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;
constexpr int64_t kT0 = 1'800'000'000 * kSecond;
constexpr MetricDesc kCpu{"vigil_host_cpu_seconds_total", "CPU time.", MetricKind::kCounter,
                          "seconds"};
constexpr MetricDesc kMem{"vigil_cgroup_memory_used_bytes", "Memory in use.", MetricKind::kGauge,
                          "bytes"};

// 1,000 series: half /proc-style counters (ticks/100), half page-granular memory gauges.
MetricBatch MakeBatch(int series) {
  MetricBatch batch;
  for (int i = 0; i < series; ++i) {
    if (i % 2 == 0) {
      batch.samples.push_back(
          Sample{&kCpu, {{"cpu", std::to_string(i / 16)}, {"mode", std::to_string(i % 16)}}, 0, 0});
    } else {
      batch.samples.push_back(
          Sample{&kMem, {{"cgroup", "/system.slice/job-" + std::to_string(i) + ".scope"}}, 0, 0});
    }
  }
  return batch;
}

void Advance(MetricBatch* batch, int64_t time_ns, std::mt19937_64& rng) {
  batch->time_ns = time_ns;
  for (Sample& s : batch->samples) {
    s.time_ns = time_ns;
    if (s.desc == &kCpu) {
      s.value = std::round(s.value * 100 + static_cast<double>(rng() % 100)) / 100.0;
    } else {
      s.value = 4096.0 * static_cast<double>(1'000'000 + rng() % 1000);
    }
  }
}

void Fill(SeriesStore* store, MetricBatch* batch, int ticks) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < ticks; ++i) {
    Advance(batch, kT0 + i * kSecond, rng);
    store->Append(*batch);
  }
}

void BM_AppendBatchOf1000Series(benchmark::State& state) {
  SeriesStore store;
  MetricBatch batch = MakeBatch(1000);
  std::mt19937_64 rng(1);
  int64_t tick = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Advance(&batch, kT0 + tick++ * kSecond, rng);
    state.ResumeTiming();
    store.Append(batch);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_AppendBatchOf1000Series);

void BM_LatestOverAllSeries(benchmark::State& state) {
  SeriesStore store;
  MetricBatch batch = MakeBatch(1000);
  Fill(&store, &batch, 300);
  const SeriesSelector all;
  for (auto _ : state) {
    benchmark::DoNotOptimize(store.Latest(all));
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_LatestOverAllSeries);

void BM_RangeOneHourOfOneSeries(benchmark::State& state) {
  SeriesStore store;
  MetricBatch batch = MakeBatch(100);
  Fill(&store, &batch, 3600);
  auto selector = ParseSelector(R"(vigil_host_cpu_seconds_total{cpu="0",mode="0"})");
  size_t points = 0;
  for (auto _ : state) {
    auto range = store.Range(*selector, kT0, kT0 + 3600 * kSecond);
    points = range.empty() ? 0 : range[0].points.size();
    benchmark::DoNotOptimize(range);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(points));
}
BENCHMARK(BM_RangeOneHourOfOneSeries);

std::vector<Point> CodecPoints() {
  std::mt19937_64 rng(2);
  std::vector<Point> points;
  int64_t ticks = 1'000'000;
  for (int i = 0; i < 240; ++i) {
    ticks += static_cast<int64_t>(rng() % 100);
    points.push_back({kT0 + i * kSecond, static_cast<double>(ticks) / 100.0});
  }
  return points;
}

void BM_GorillaEncode(benchmark::State& state) {
  const std::vector<Point> points = CodecPoints();
  for (auto _ : state) {
    GorillaEncoder encoder;
    for (const Point& p : points) {
      benchmark::DoNotOptimize(encoder.Append(p.time_ns, p.value));
    }
    benchmark::DoNotOptimize(encoder.Seal());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(points.size()));
}
BENCHMARK(BM_GorillaEncode);

void BM_GorillaDecode(benchmark::State& state) {
  GorillaEncoder encoder;
  for (const Point& p : CodecPoints()) {
    encoder.Append(p.time_ns, p.value).IgnoreError();
  }
  const GorillaBlock block = encoder.Seal();
  for (auto _ : state) {
    GorillaDecoder decoder(block.bytes(), block.count);
    Point p;
    while (decoder.Next(&p)) {
      benchmark::DoNotOptimize(p);
    }
  }
  state.SetItemsProcessed(state.iterations() * block.count);
  state.SetBytesProcessed(state.iterations() * block.size);
}
BENCHMARK(BM_GorillaDecode);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
