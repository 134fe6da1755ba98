// SPDX-License-Identifier: Apache-2.0
// Memory cost of the series store on realistic host data: 1,000 series sampled every second for
// an hour. Prints the measured numbers that docs/metrics.md quotes.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/gorilla_block.h"
#include "metrics/series_store.h"

namespace vigil {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;
constexpr int64_t kT0 = 1'800'000'000 * kSecond;
constexpr int kSeries = 1000;
constexpr int kPoints = 3600;

constexpr MetricDesc kCpu{"vigil_host_cpu_seconds_total", "CPU time.", MetricKind::kCounter,
                          "seconds"};
constexpr MetricDesc kNetBytes{"vigil_host_network_received_bytes_total", "Bytes received.",
                               MetricKind::kCounter, "bytes"};
constexpr MetricDesc kDiskBytes{"vigil_host_disk_read_bytes_total", "Bytes read.",
                                MetricKind::kCounter, "bytes"};
constexpr MetricDesc kOps{"vigil_host_disk_reads_total", "Reads completed.", MetricKind::kCounter,
                          ""};
constexpr MetricDesc kMemBytes{"vigil_cgroup_memory_used_bytes", "Memory in use.",
                               MetricKind::kGauge, "bytes"};
constexpr MetricDesc kUtil{"vigil_gpu_utilization_ratio", "GPU utilisation.", MetricKind::kGauge,
                           "ratio"};
constexpr MetricDesc kLoad{"vigil_host_load1", "Load average.", MetricKind::kGauge, ""};
constexpr MetricDesc kTemp{"vigil_gpu_temperature_celsius", "Temperature.", MetricKind::kGauge,
                           "celsius"};
constexpr MetricDesc kPower{"vigil_gpu_power_watts", "Power draw.", MetricKind::kGauge, "watts"};
constexpr MetricDesc kUp{"vigil_collector_success", "Last run succeeded.", MetricKind::kGauge, ""};

// One synthetic series: how its value evolves each second, in the units /proc or NVML report
// before conversion, so converted values are exact decimals like a real parser produces.
struct SyntheticSeries {
  enum class Shape {
    kCpuTicks,
    kBytes,
    kSectors,
    kCounts,
    kMemPages,
    kRatio,
    kLoadAverage,
    kDegrees,
    kMilliwatts,
    kConstant
  };
  const MetricDesc* desc;
  Labels labels;
  Shape shape;
  double rate;  // Shape-specific scale.
  int64_t raw = 0;
  double smooth = 0;

  double Next(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    std::normal_distribution<double> n(0, 1);
    switch (shape) {
      case Shape::kCpuTicks:  // USER_HZ ticks / 100.
        raw += static_cast<int64_t>(rate * u(rng) * 2);
        return static_cast<double>(raw) / 100.0;
      case Shape::kBytes:  // Bursty traffic, idle a third of the time.
        if (u(rng) > 0.33) {
          raw += static_cast<int64_t>(std::exp(rate + 2 * n(rng)));
        }
        return static_cast<double>(raw);
      case Shape::kSectors:
        if (u(rng) > 0.5) {
          raw += 512 * static_cast<int64_t>(std::exp(rate + 1.5 * n(rng)));
        }
        return static_cast<double>(raw);
      case Shape::kCounts:
        raw += static_cast<int64_t>(rate * u(rng));
        return static_cast<double>(raw);
      case Shape::kMemPages:  // meminfo kB * 1024, moving by whole pages.
        if (u(rng) > 0.4) {
          raw = std::max<int64_t>(4, raw + 4 * static_cast<int64_t>(rate * n(rng)));
        }
        return static_cast<double>(raw) * 1024.0;
      case Shape::kRatio:  // Utilisation wandering with noise, reported as whole percent.
        smooth = std::clamp(smooth + 0.02 * n(rng), 0.0, 1.0);
        return std::round(std::clamp(smooth + 0.03 * n(rng), 0.0, 1.0) * 100) / 100.0;
      case Shape::kLoadAverage:  // /proc/loadavg: smooth, two decimals.
        smooth = std::max(0.0, smooth * 0.98 + 0.02 * (rate + 3 * u(rng)));
        return std::round(smooth * 100) / 100.0;
      case Shape::kDegrees:
        smooth = std::clamp(smooth + 0.2 * n(rng), 30.0, 90.0);
        return std::round(smooth);
      case Shape::kMilliwatts:  // NVML power in mW, exported in W.
        smooth = std::clamp(smooth + 5000 * n(rng), 60000.0, 700000.0);
        return std::round(smooth) / 1000.0;
      case Shape::kConstant:
        return rate;
    }
    return 0;
  }
};

std::vector<SyntheticSeries> MakeHost(std::mt19937_64& rng) {
  using Shape = SyntheticSeries::Shape;
  std::vector<SyntheticSeries> out;
  const char* kModes[] = {"user", "system", "idle", "iowait", "irq", "softirq", "steal", "nice"};
  const double kModeRate[] = {60, 8, 30, 2, 0.3, 1, 0, 0.1};
  for (int cpu = 0; out.size() < 300; ++cpu) {
    for (int m = 0; m < 8 && out.size() < 300; ++m) {
      out.push_back({&kCpu,
                     {{"cpu", std::to_string(cpu)}, {"mode", kModes[m]}},
                     Shape::kCpuTicks,
                     kModeRate[m],
                     static_cast<int64_t>(rng() % 100'000'000)});
    }
  }
  auto gpu = [](int i) {
    return "GPU-3f0c1a2b-77d4-4c1e-9b1a-0000000000" + std::to_string(10 + i);
  };
  for (int i = 0; i < 80; ++i) {
    out.push_back({&kNetBytes,
                   {{"interface", "eth" + std::to_string(i)}},
                   Shape::kBytes,
                   9,
                   static_cast<int64_t>(rng() % 1'000'000'000'000)});
  }
  for (int i = 0; i < 70; ++i) {
    out.push_back({&kDiskBytes,
                   {{"device", "nvme" + std::to_string(i) + "n1"}},
                   Shape::kSectors,
                   3,
                   512 * static_cast<int64_t>(rng() % 1'000'000'000)});
  }
  for (int i = 0; i < 100; ++i) {
    out.push_back({&kOps,
                   {{"device", "sd" + std::to_string(i)}},
                   Shape::kCounts,
                   40,
                   static_cast<int64_t>(rng() % 10'000'000)});
  }
  for (int i = 0; i < 150; ++i) {
    out.push_back({&kMemBytes,
                   {{"cgroup", "/system.slice/job-" + std::to_string(i) + ".scope"}},
                   Shape::kMemPages,
                   200,
                   static_cast<int64_t>(rng() % 50'000'000)});
  }
  for (int i = 0; i < 100; ++i) {
    out.push_back({&kUtil, {{"gpu_uuid", gpu(i)}}, Shape::kRatio, 0, 0, 0.5});
  }
  for (int i = 0; i < 100; ++i) {
    out.push_back({&kLoad, {{"cpu", std::to_string(i)}}, Shape::kLoadAverage, 4, 0, 4});
  }
  for (int i = 0; i < 25; ++i) {
    out.push_back({&kTemp, {{"gpu_uuid", gpu(i)}}, Shape::kDegrees, 0, 0, 55});
    out.push_back({&kPower, {{"gpu_uuid", gpu(i)}}, Shape::kMilliwatts, 0, 0, 300000});
  }
  for (int i = 0; out.size() < kSeries; ++i) {
    out.push_back({&kUp, {{"collector", "c" + std::to_string(i)}}, Shape::kConstant, 1});
  }
  return out;
}

TEST(SeriesStoreMemoryTest, ThousandSeriesForAnHourFitInAFewMiB) {
  std::mt19937_64 rng(2026);
  std::vector<SyntheticSeries> host = MakeHost(rng);
  ASSERT_EQ(host.size(), static_cast<size_t>(kSeries));
  SeriesStore store;  // Defaults: 1 h raw, 1 min steps for 24 h.
  // Keep a few series' values to check the store returns them bit for bit.
  const size_t kChecked[] = {0, 305, 460, 600, 720, 830, 930};
  std::vector<std::vector<double>> expected(std::size(kChecked));

  // One batch reused every tick (only values and times change), so the test measures the store
  // rather than copying label strings.
  MetricBatch batch;
  for (const SyntheticSeries& s : host) {
    batch.samples.push_back(Sample{s.desc, s.labels, 0, 0});
  }
  for (int i = 0; i < kPoints; ++i) {
    batch.time_ns = kT0 + i * kSecond;
    for (size_t s = 0; s < host.size(); ++s) {
      const double v = host[s].Next(rng);
      batch.samples[s].value = v;
      batch.samples[s].time_ns = batch.time_ns;
      for (size_t c = 0; c < std::size(kChecked); ++c) {
        if (kChecked[c] == s) {
          expected[c].push_back(v);
        }
      }
    }
    store.Append(batch);
  }

  const SeriesStoreStats st = store.stats();
  ASSERT_EQ(st.series, static_cast<size_t>(kSeries));
  ASSERT_EQ(st.raw_points, static_cast<size_t>(kSeries) * kPoints);
  ASSERT_EQ(st.rejected_samples, 0u);
  const double samples = static_cast<double>(st.raw_points);
  const double payload_per_sample = static_cast<double>(st.raw_payload_bytes) / samples;
  const double blocks_per_sample = static_cast<double>(st.raw_block_bytes) / samples;
  const double ds_per_point =
      static_cast<double>(st.downsampled_block_bytes) / static_cast<double>(st.downsampled_points);
  const double mib = 1024.0 * 1024.0;
  const double ds_day_mib = ds_per_point * 1440.0 * kSeries / mib;
  std::printf(
      "series store, %d series x %d points at 1 s:\n"
      "  raw payload        %.3f bytes/sample\n"
      "  raw blocks         %.3f bytes/sample (payload + block headers + slack)\n"
      "  raw tier           %.2f MiB\n"
      "  downsampled        %zu points, %.2f bytes/point -> %.2f MiB for 24 h at 1 min\n"
      "  store total        %.2f MiB (%.1f bytes/series besides blocks)\n",
      kSeries, kPoints, payload_per_sample, blocks_per_sample,
      static_cast<double>(st.raw_block_bytes) / mib, st.downsampled_points, ds_per_point,
      ds_day_mib, static_cast<double>(st.bytes) / mib,
      static_cast<double>(st.bytes - st.raw_block_bytes - st.downsampled_block_bytes) / kSeries);

  EXPECT_LT(blocks_per_sample, 2.5);
  EXPECT_LE(payload_per_sample, blocks_per_sample);
  EXPECT_LT(static_cast<double>(st.bytes), 8 * mib);

  for (size_t c = 0; c < std::size(kChecked); ++c) {
    const SyntheticSeries& s = host[kChecked[c]];
    SeriesSelector selector{std::string(s.desc->name), {}};
    for (const auto& [name, value] : s.labels) {
      selector.matchers.push_back({name, LabelMatcher::Op::kEq, value});
    }
    auto range = store.Range(selector, kT0, kT0 + kPoints * kSecond);
    ASSERT_EQ(range.size(), 1u);
    ASSERT_EQ(range[0].points.size(), expected[c].size());
    for (size_t i = 0; i < expected[c].size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint64_t>(range[0].points[i].value),
                std::bit_cast<uint64_t>(expected[c][i]))
          << s.desc->name << " point " << i;
    }
  }
}

// Timestamps cost 1 bit on an exact grid; clock-read jitter costs much more. Printed for the docs,
// and bounded so a codec change that makes either case worse is noticed.
TEST(SeriesStoreMemoryTest, TimestampCostDependsOnJitter) {
  std::mt19937_64 rng(5);
  double bits[3] = {};
  const int64_t kJitterNs[3] = {0, 100'000, 2'000'000};  // None, up to 100 us, up to 2 ms.
  for (int j = 0; j < 3; ++j) {
    GorillaEncoder encoder;
    size_t bits_after_first = 0;
    for (int i = 0; i < 240; ++i) {
      const int64_t jitter =
          kJitterNs[j] == 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(kJitterNs[j]));
      ASSERT_TRUE(encoder.Append(kT0 + i * kSecond + jitter, 1.0).ok());
      if (i == 1) {
        bits_after_first = encoder.bit_count();
      }
    }
    // Each later point costs its timestamp plus 1 bit for the unchanged value.
    bits[j] = static_cast<double>(encoder.bit_count() - bits_after_first) / 238.0 - 1.0;
  }
  std::printf("timestamp bits/sample: exact 1 s grid %.2f, <=100 us jitter %.2f, <=2 ms %.2f\n",
              bits[0], bits[1], bits[2]);
  EXPECT_EQ(bits[0], 1.0);
  EXPECT_LE(bits[1], 27.0);
  EXPECT_LE(bits[2], 36.0);
}

}  // namespace
}  // namespace vigil
