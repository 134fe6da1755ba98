// SPDX-License-Identifier: Apache-2.0
#include "metrics/series_store.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kT0 = 1'800'000'000 * kSecond;  // Aligned to the minute.

constexpr MetricDesc kCpu{"vigil_host_cpu_seconds_total", "CPU time by mode.", MetricKind::kCounter,
                          "seconds"};
constexpr MetricDesc kMem{"vigil_host_memory_used_bytes", "Memory in use.", MetricKind::kGauge,
                          "bytes"};

Sample S(const MetricDesc& desc, double value, Labels labels = {}) {
  return Sample{&desc, std::move(labels), value, 0};
}

MetricBatch Batch(int64_t time_ns, std::vector<Sample> samples) {
  MetricBatch batch;
  batch.time_ns = time_ns;
  for (Sample& s : samples) {
    s.time_ns = time_ns;
  }
  batch.samples = std::move(samples);
  return batch;
}

SeriesSelector Sel(std::string_view text) {
  auto selector = ParseSelector(text);
  EXPECT_TRUE(selector.ok()) << selector.status().ToString();
  return selector.value_or(SeriesSelector{});
}

TEST(SeriesStoreTest, LatestReturnsNewestPointOfEachSeriesSorted) {
  SeriesStore store;
  for (int i = 0; i < 5; ++i) {
    store.Append(Batch(kT0 + i * kSecond,
                       {S(kCpu, 10.0 + i, {{"cpu", "1"}, {"mode", "user"}}),
                        S(kCpu, 20.0 + i, {{"cpu", "0"}, {"mode", "user"}}), S(kMem, 1000.0 * i)}));
  }
  auto all = store.Latest(SeriesSelector{});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].desc, &kCpu);
  EXPECT_EQ(LabelValue(all[0].labels, "cpu"), "0");
  EXPECT_EQ(LabelValue(all[1].labels, "cpu"), "1");
  EXPECT_EQ(all[2].desc, &kMem);
  ASSERT_EQ(all[1].points.size(), 1u);
  EXPECT_EQ(all[1].points[0].time_ns, kT0 + 4 * kSecond);
  EXPECT_EQ(all[1].points[0].value, 14.0);
  EXPECT_EQ(all[2].points[0].value, 4000.0);
}

TEST(SeriesStoreTest, LatestLeavesOutSeriesOlderThanMaxAge) {
  SeriesStore store;
  store.Append(Batch(kT0, {S(kMem, 1, {{"device", "a"}}), S(kMem, 2, {{"device", "b"}})}));
  store.Append(Batch(kT0 + 30 * kSecond, {S(kMem, 3, {{"device", "a"}})}));

  EXPECT_EQ(store.Latest(Sel("vigil_host_memory_used_bytes")).size(), 2u);
  auto fresh = store.Latest(Sel("vigil_host_memory_used_bytes"), 10 * kSecond);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(LabelValue(fresh[0].labels, "device"), "a");
}

TEST(SeriesStoreTest, UnsortedLabelsNameTheSameSeries) {
  SeriesStore store;
  MetricBatch a = Batch(kT0, {S(kCpu, 1, {{"mode", "user"}, {"cpu", "0"}})});
  MetricBatch b = Batch(kT0 + kSecond, {S(kCpu, 2, {{"cpu", "0"}, {"mode", "user"}})});
  store.Append(a);
  store.Append(b);
  EXPECT_EQ(store.stats().series, 1u);
  auto latest = store.Latest(SeriesSelector{});
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].labels, (Labels{{"cpu", "0"}, {"mode", "user"}}));
}

TEST(SeriesStoreTest, RangeReturnsPointsInsideTheWindowAscending) {
  SeriesStore store;
  for (int i = 0; i < 600; ++i) {
    store.Append(Batch(kT0 + i * kSecond, {S(kMem, i * 2.0)}));
  }
  auto range =
      store.Range(Sel("vigil_host_memory_used_bytes"), kT0 + 10 * kSecond, kT0 + 550 * kSecond);
  ASSERT_EQ(range.size(), 1u);
  const auto& points = range[0].points;
  ASSERT_EQ(points.size(), 541u);  // Crosses two sealed blocks and the open one.
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].time_ns, kT0 + (10 + static_cast<int64_t>(i)) * kSecond);
    EXPECT_EQ(points[i].value, (10.0 + static_cast<double>(i)) * 2.0);
  }
  EXPECT_TRUE(store.Range(SeriesSelector{}, kT0 - 10 * kSecond, kT0 - kSecond).empty());
  EXPECT_TRUE(store.Range(SeriesSelector{}, kT0 + 5 * kSecond, kT0).empty());
}

TEST(SeriesStoreTest, RangeStepKeepsTheLastPointOfEachStep) {
  SeriesStore store;
  for (int i = 0; i < 100; ++i) {
    store.Append(Batch(kT0 + i * kSecond, {S(kMem, i)}));
  }
  auto range = store.Range(SeriesSelector{}, kT0, kT0 + 99 * kSecond, 10 * kSecond);
  ASSERT_EQ(range.size(), 1u);
  const auto& points = range[0].points;
  ASSERT_EQ(points.size(), 10u);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(points[k].time_ns, kT0 + (10 * k + 9) * kSecond);
    EXPECT_EQ(points[k].value, 10 * k + 9);
  }
}

TEST(SeriesStoreTest, SelectorsFilterByNameAndLabels) {
  SeriesStore store;
  std::vector<Sample> samples;
  for (const char* mode : {"user", "system", "idle", "iowait"}) {
    for (const char* cpu : {"0", "1", "12"}) {
      samples.push_back(S(kCpu, 1, {{"cpu", cpu}, {"mode", mode}}));
    }
  }
  samples.push_back(S(kMem, 5));
  store.Append(Batch(kT0, samples));

  EXPECT_EQ(store.Latest(Sel("")).size(), 13u);
  EXPECT_EQ(store.Latest(Sel("vigil_host_cpu_seconds_total")).size(), 12u);
  EXPECT_EQ(store.Latest(Sel("vigil_host_cpu_seconds_total{mode=\"idle\"}")).size(), 3u);
  EXPECT_EQ(store.Latest(Sel("{mode!=\"idle\"}")).size(), 10u);  // Includes kMem (no mode).
  EXPECT_EQ(store.Latest(Sel("{cpu=~\"1.*\"}")).size(), 8u);
  EXPECT_EQ(store.Latest(Sel("{cpu=~\"1\"}")).size(), 4u);  // Anchored: "12" is not "1".
  EXPECT_EQ(store.Latest(Sel("{mode!~\"i.*\", cpu=\"0\"}")).size(), 2u);
  EXPECT_EQ(store.Latest(Sel("{__name__=~\"vigil_host_mem.*\"}")).size(), 1u);
  EXPECT_EQ(store.Latest(Sel("{mode=\"\"}")).size(), 1u);  // Missing label matches "".
  EXPECT_TRUE(store.Latest(Sel("vigil_nothing")).empty());
}

TEST(SeriesStoreTest, OutOfOrderSamplesAreRejectedAndCounted) {
  SeriesStore store;
  store.Append(Batch(kT0 + 10 * kSecond, {S(kMem, 1)}));
  store.Append(Batch(kT0 + 5 * kSecond, {S(kMem, 2)}));
  store.Append(Batch(kT0 + 10 * kSecond, {S(kMem, 3)}));
  EXPECT_EQ(store.stats().rejected_samples, 2u);
  EXPECT_EQ(store.stats().raw_points, 1u);
  EXPECT_EQ(store.Latest(SeriesSelector{})[0].points[0].value, 1);
}

TEST(SeriesStoreTest, SeriesCapDropsNewSeriesButKeepsExistingOnes) {
  SeriesStoreOptions options;
  options.max_series = 3;
  SeriesStore store(options);
  for (int t = 0; t < 2; ++t) {
    std::vector<Sample> samples;
    for (int i = 0; i < 5; ++i) {
      samples.push_back(S(kMem, i, {{"device", std::to_string(i)}}));
    }
    store.Append(Batch(kT0 + t * kSecond, samples));
  }
  SeriesStoreStats stats = store.stats();
  EXPECT_EQ(stats.series, 3u);
  EXPECT_EQ(stats.dropped_series, 4u);  // Two refused series, twice.
  EXPECT_EQ(stats.raw_points, 6u);
}

TEST(SeriesStoreTest, OldRawDataIsServedFromTheDownsampledTier) {
  SeriesStoreOptions options;
  options.raw_retention_ns = 10 * kMinute;
  options.downsample_step_ns = kMinute;
  options.downsampled_retention_ns = 60 * kMinute;
  SeriesStore store(options);
  const int kPoints = 30 * 60;
  for (int i = 0; i < kPoints; ++i) {
    // Counter grows by i; the gauge alternates so the mean of a minute is known.
    store.Append(Batch(kT0 + i * kSecond, {S(kCpu, i * 1.0), S(kMem, i % 2 == 0 ? 10 : 20)}));
  }
  SeriesStoreStats stats = store.stats();
  // Raw keeps ~10 min plus at most one block of slack.
  EXPECT_GE(stats.raw_points, 2u * 600u);
  EXPECT_LE(stats.raw_points, 2u * (600u + 150u + 1u));  // A block spans <= 150 s.
  EXPECT_GE(stats.downsampled_points, 2u * 28u);

  auto range = store.Range(SeriesSelector{}, kT0, kT0 + kPoints * kSecond);
  ASSERT_EQ(range.size(), 2u);
  const auto& cpu = range[0].points;  // Sorted: cpu before memory.
  const auto& mem = range[1].points;
  ASSERT_FALSE(cpu.empty());
  // The oldest points are one per minute, at the minute's last sample.
  for (int m = 0; m < 15; ++m) {
    ASSERT_LT(static_cast<size_t>(m), cpu.size());
    EXPECT_EQ(cpu[m].time_ns, kT0 + (m * 60 + 59) * kSecond) << "minute " << m;
    EXPECT_EQ(cpu[m].value, m * 60 + 59.0);  // Counter: last value.
    EXPECT_EQ(mem[m].value, 15.0);           // Gauge: mean of 10 and 20.
  }
  // Then raw points, one per second, to the end.
  EXPECT_EQ(cpu.back().time_ns, kT0 + (kPoints - 1) * kSecond);
  EXPECT_EQ(cpu[cpu.size() - 2].time_ns, kT0 + (kPoints - 2) * kSecond);
  for (size_t i = 1; i < cpu.size(); ++i) {
    ASSERT_LT(cpu[i - 1].time_ns, cpu[i].time_ns);
  }
}

TEST(SeriesStoreTest, StaleSeriesIsForgottenOnceAllItsDataAgedOut) {
  SeriesStoreOptions options;
  options.raw_retention_ns = 5 * kMinute;
  options.downsample_step_ns = kMinute;
  options.downsampled_retention_ns = 30 * kMinute;
  SeriesStore store(options);
  for (int i = 0; i < 120; ++i) {
    store.Append(Batch(kT0 + i * kSecond,
                       {S(kMem, 1, {{"device", "gone"}}), S(kMem, 2, {{"device", "stays"}})}));
  }
  bool shrank_on_removal = false;
  for (int i = 120; i < 45 * 60; i += 10) {
    const SeriesStoreStats before = store.stats();
    store.Append(Batch(kT0 + i * kSecond, {S(kMem, 2, {{"device", "stays"}})}));
    const SeriesStoreStats after = store.stats();
    if (before.series == 2 && after.series == 1) {
      shrank_on_removal = after.bytes < before.bytes;
    }
    if (i == 20 * 60) {
      // Raw data of the stale series is gone, its downsampled points remain.
      auto old = store.Range(Sel("{device=\"gone\"}"), kT0, kT0 + 2 * kMinute);
      ASSERT_EQ(old.size(), 1u);
      EXPECT_EQ(old[0].points.size(), 2u);
    }
  }
  SeriesStoreStats stats = store.stats();
  EXPECT_EQ(stats.series, 1u);
  EXPECT_TRUE(shrank_on_removal);
  EXPECT_TRUE(store.Latest(Sel("{device=\"gone\"}")).empty());
  EXPECT_EQ(store.Latest(Sel("{device=\"stays\"}")).size(), 1u);
}

// A collector usually writes the same series in the same order; the store remembers where each
// sample went. Samples that change places, come and go, or whose series was forgotten meanwhile
// still land on their own series.
TEST(SeriesStoreTest, SamplesThatChangePlacesOrComeBackAfterBeingForgottenLandOnTheirSeries) {
  SeriesStoreOptions options;
  options.raw_retention_ns = kMinute;
  options.downsample_step_ns = 0;
  SeriesStore store(options);
  const Labels a = {{"device", "a"}};
  const Labels b = {{"device", "b"}};
  store.Append(Batch(kT0, {S(kMem, 1, a), S(kMem, 2, b)}));
  store.Append(Batch(kT0 + kSecond, {S(kMem, 3, b), S(kMem, 4, a)}));
  EXPECT_EQ(store.Latest(Sel("{device=\"a\"}"))[0].points.back().value, 4);
  EXPECT_EQ(store.Latest(Sel("{device=\"b\"}"))[0].points.back().value, 3);

  // "a" ages out and is forgotten while "b" goes on alone; then "a" comes back in its old place.
  for (int i = 2; i < 200; ++i) {
    store.Append(Batch(kT0 + i * kSecond, {S(kMem, 5, b)}));
  }
  ASSERT_EQ(store.stats().series, 1u);
  store.Append(Batch(kT0 + 200 * kSecond, {S(kMem, 6, b), S(kMem, 7, a)}));
  store.Append(Batch(kT0 + 201 * kSecond, {S(kCpu, 8), S(kMem, 9, a)}));

  EXPECT_EQ(store.stats().series, 3u);
  const auto back = store.Range(Sel("{device=\"a\"}"), kT0 + 150 * kSecond, kT0 + 300 * kSecond);
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].points.size(), 2u);
  EXPECT_EQ(back[0].points[0].value, 7);
  EXPECT_EQ(back[0].points[1].value, 9);
  EXPECT_EQ(store.Latest(Sel("vigil_host_cpu_seconds_total"))[0].points.back().value, 8);
}

MetricBatch FromSource(std::string source, int64_t time_ns, std::vector<Sample> samples,
                       bool complete = true) {
  MetricBatch batch = Batch(time_ns, std::move(samples));
  batch.source = std::move(source);
  batch.complete = complete;
  return batch;
}

// A GPU's job label changes between two ticks (a mapping reload): the old series must leave the
// latest view at once, or a sum by job counts the GPU twice until the old one ages out.
TEST(SeriesStoreTest, LatestShowsOnlyWhatTheSourcesLastBatchWrote) {
  SeriesStore store;
  store.Append(FromSource("gpu", kT0, {S(kMem, 1, {{"gpu", "0"}, {"job_id", "a"}})}));
  store.Append(FromSource("host", kT0, {S(kCpu, 5, {{"cpu", "0"}})}));
  store.Append(FromSource("gpu", kT0 + kSecond, {S(kMem, 2, {{"gpu", "0"}, {"job_id", "b"}})}));

  auto gpu = store.Latest(Sel("vigil_host_memory_used_bytes"), 60 * kSecond);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(LabelValue(gpu[0].labels, "job_id"), "b");
  // Another source's batch leaves this one's series alone.
  EXPECT_EQ(store.Latest(Sel("vigil_host_cpu_seconds_total")).size(), 1u);
  size_t visited = 0;
  store.VisitLatest(0, [&](std::vector<LatestRef>& refs) { visited = refs.size(); });
  EXPECT_EQ(visited, 2u);
  // The history of the old series is still there for range queries.
  EXPECT_EQ(store.Range(Sel("{job_id=\"a\"}"), kT0, kT0 + kSecond).size(), 1u);
}

// A scrape renders VisitLatest()'s order as it comes: by name, then labels, after series came
// and went.
TEST(SeriesStoreTest, VisitLatestHandsTheSeriesSortedByNameThenLabels) {
  SeriesStore store;
  store.Append(Batch(kT0, {S(kMem, 1), S(kCpu, 1, {{"cpu", "9"}}), S(kCpu, 1, {{"cpu", "10"}})}));
  store.Append(Batch(kT0 + kSecond, {S(kCpu, 2, {{"cpu", "0"}}), S(kMem, 2)}));
  std::vector<std::string> order;
  store.VisitLatest(0, [&](std::vector<LatestRef>& refs) {
    for (const LatestRef& r : refs) {
      order.push_back(std::string(r.desc->name) + "/" + std::string(LabelValue(*r.labels, "cpu")));
    }
  });
  EXPECT_EQ(order, (std::vector<std::string>{
                       "vigil_host_cpu_seconds_total/0", "vigil_host_cpu_seconds_total/10",
                       "vigil_host_cpu_seconds_total/9", "vigil_host_memory_used_bytes/"}));
}

// A collector that failed part-way keeps its other series as they were.
TEST(SeriesStoreTest, AnIncompleteBatchDropsNothingFromTheLatestView) {
  SeriesStore store;
  store.Append(
      FromSource("disk", kT0, {S(kMem, 1, {{"device", "sda"}}), S(kMem, 2, {{"device", "sdb"}})}));
  store.Append(FromSource("disk", kT0 + kSecond, {S(kMem, 3, {{"device", "sda"}})},
                          /*complete=*/false));
  EXPECT_EQ(store.Latest(Sel("vigil_host_memory_used_bytes")).size(), 2u);
  store.Append(FromSource("disk", kT0 + 2 * kSecond, {S(kMem, 4, {{"device", "sda"}})}));
  auto latest = store.Latest(Sel("vigil_host_memory_used_bytes"));
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].points[0].value, 4);
}

TEST(SeriesStoreTest, BytesGrowWithDataAndShrinkWhenItAgesOut) {
  SeriesStoreOptions options;
  options.raw_retention_ns = 10 * kMinute;
  SeriesStore store(options);
  const size_t empty = store.stats().bytes;
  EXPECT_GT(empty, 0u);
  for (int i = 0; i < 600; ++i) {
    store.Append(Batch(kT0 + i * kSecond, {S(kMem, i % 17)}));
  }
  const SeriesStoreStats full = store.stats();
  EXPECT_GT(full.bytes, empty + full.raw_payload_bytes);
  EXPECT_GE(full.raw_block_bytes, full.raw_payload_bytes);
  // A long gap: everything ages out except the new point.
  store.Append(Batch(kT0 + 48 * 60 * kMinute, {S(kMem, 1)}));
  EXPECT_LT(store.stats().bytes, full.bytes);
  EXPECT_EQ(store.stats().raw_points, 1u);
}

TEST(SeriesStoreTest, ReadersSeeConsistentDataWhileOneWriterAppends) {
  SeriesStoreOptions options;
  options.raw_retention_ns = 5 * kMinute;
  options.downsample_step_ns = 10 * kSecond;
  SeriesStore store(options);
  constexpr int kSeries = 20;
  constexpr int kTicks = 1500;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};

  auto reader = [&] {
    int rounds = 0;
    while (!done.load() || rounds < 3) {
      ++rounds;
      for (const SeriesData& s : store.Latest(SeriesSelector{})) {
        // Value i*1000+series was written at tick i: it must match its own time.
        const int64_t tick = (s.points[0].time_ns - kT0) / kSecond;
        const double expected = static_cast<double>(tick * 1000) +
                                std::stod(std::string(LabelValue(s.labels, "device")));
        if (s.points[0].value != expected) {
          failures.fetch_add(1);
        }
      }
      for (const SeriesData& s : store.Range(Sel("{device=\"3\"}"), kT0, kT0 + kTicks * kSecond)) {
        for (size_t i = 1; i < s.points.size(); ++i) {
          if (s.points[i - 1].time_ns >= s.points[i].time_ns) {
            failures.fetch_add(1);
          }
        }
      }
      (void)store.stats();
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back(reader);
  }
  for (int i = 0; i < kTicks; ++i) {
    std::vector<Sample> samples;
    for (int d = 0; d < kSeries; ++d) {
      samples.push_back(S(kMem, i * 1000.0 + d, {{"device", std::to_string(d)}}));
    }
    store.Append(Batch(kT0 + i * kSecond, samples));
  }
  done.store(true);
  for (std::thread& t : readers) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store.stats().series, static_cast<size_t>(kSeries));
}

}  // namespace
}  // namespace vigil
