// SPDX-License-Identifier: Apache-2.0
#include "daemon/self_collector.h"

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "daemon/host_info.h"
#include "metrics/naming.h"

namespace vigil::daemon {
namespace {

TEST(SelfCollectorTest, MetricNamesFollowTheRules) {
  for (const MetricDesc* desc : SelfCollector::Metrics()) {
    EXPECT_TRUE(CheckMetricDesc(*desc).ok()) << CheckMetricDesc(*desc).message();
  }
}

TEST(SelfCollectorTest, ReportsThisProcessAndTheStore) {
  SeriesStoreStats stats;
  stats.series = 7;
  stats.bytes = 4096;
  SelfCollector collector([&] { return stats; },
                          [] {
                            return std::vector<SinkDrops>{{"jsonl", 3}};
                          },
                          UnixNanos() - 5 * kNanosPerSecond, [] { return "10.0.0.7:1778"; });
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

TEST(SelfCollectorTest, AdvertisesTheRpcAddressWithTheHostNameForAWildcard) {
  EXPECT_EQ(AdvertisedRpcAddress("127.0.0.1:1778", "node01"), "127.0.0.1:1778");
  EXPECT_EQ(AdvertisedRpcAddress("0.0.0.0:1778", "node01"), "node01:1778");
  EXPECT_EQ(AdvertisedRpcAddress("[::]:1800", "node02"), "node02:1800");
  EXPECT_EQ(AdvertisedRpcAddress("", "node01"), "");
}

}  // namespace
}  // namespace vigil::daemon
