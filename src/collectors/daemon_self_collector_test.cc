// SPDX-License-Identifier: Apache-2.0
#include "collectors/daemon_self_collector.h"

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "base/version.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

TEST(DaemonSelfCollectorTest, ReportsThisProcessAndTheStore) {
  SeriesStoreStats stats;
  stats.series = 7;
  stats.bytes = 4096;
  DaemonSelfCollectorOptions options;
  options.store_stats = [&] { return stats; };
  options.sink_drops = [] { return std::vector<SinkDrops>{{"jsonl", 3}}; };
  options.start_unix_ns = UnixNanos() - 5 * kNanosPerSecond;
  options.rpc_address = [] { return "10.0.0.7:1778"; };
  DaemonSelfCollector collector(options);
  MetricBatch batch;
  MetricWriter writer(&batch);
  ASSERT_TRUE(collector.Collect(writer).ok());
  std::map<std::string, double> values;
  for (const Sample& s : batch.samples) {
    values[std::string(s.desc->name)] = s.value;
    if (s.desc->name == "vigil_daemon_info") {
      EXPECT_EQ(LabelValue(s.labels, "version"), kVersion);
      EXPECT_EQ(LabelValue(s.labels, "rpc_address"), "10.0.0.7:1778");
    }
  }
  EXPECT_EQ(values["vigil_daemon_info"], 1);
  EXPECT_EQ(values["vigil_daemon_store_series"], 7);
  EXPECT_EQ(values["vigil_daemon_store_bytes"], 4096);
  EXPECT_EQ(values["vigil_daemon_sink_dropped_batches_total"], 3);
  EXPECT_GE(values["vigil_daemon_uptime_seconds"], 5);
  EXPECT_GT(values["vigil_daemon_resident_memory_bytes"], 1 << 20);
  EXPECT_GE(values["vigil_daemon_cpu_seconds_total"], 0);
}

// Counting the store's bytes walks every series: once per kStoreStatsEvery, not every tick.
TEST(DaemonSelfCollectorTest, TheStoreIsCountedAtMostEveryTenSeconds) {
  int asked = 0;
  DaemonSelfCollectorOptions options;
  options.store_stats = [&] {
    ++asked;
    SeriesStoreStats stats;
    stats.series = static_cast<size_t>(asked);
    return stats;
  };
  DaemonSelfCollector collector(options);
  for (int tick = 0; tick < 5; ++tick) {
    MetricBatch batch;
    MetricWriter writer(&batch);
    ASSERT_TRUE(collector.Collect(writer).ok());
    for (const Sample& s : batch.samples) {
      if (s.desc->name == "vigil_daemon_store_series") {
        EXPECT_EQ(s.value, 1) << "tick " << tick;
      }
    }
  }
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(DaemonSelfCollector::kStoreStatsEvery, 10 * kNanosPerSecond);
}

TEST(DaemonSelfCollectorTest, IsAbsentOutsideARunningDaemon) {
  CollectorContext context;  // As vigild --once or a tool builds it: no options set.
  std::unique_ptr<Collector> collector = DaemonSelfCollector::kInfo.create(context);
  MetricBatch batch;
  MetricWriter writer(&batch);
  const Status s = collector->Collect(writer);
  EXPECT_TRUE(IsAbsent(s)) << s.message();
  EXPECT_TRUE(batch.samples.empty());
}

}  // namespace
}  // namespace vigil
