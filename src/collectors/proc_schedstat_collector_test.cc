// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_schedstat_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(ProcSchedstatCollectorTest, ReadsPerCpuTimes) {
  ProcSchedstatCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_host_schedstat_running_seconds_total"), 2u);
  EXPECT_EQ(FindValue(b, "vigil_host_schedstat_running_seconds_total", {{"cpu", "0"}}), 2500);
  EXPECT_EQ(FindValue(b, "vigil_host_schedstat_waiting_seconds_total", {{"cpu", "0"}}), 120);
  EXPECT_EQ(FindValue(b, "vigil_host_schedstat_timeslices_total", {{"cpu", "0"}}), 987654);
  EXPECT_EQ(FindValue(b, "vigil_host_schedstat_running_seconds_total", {{"cpu", "1"}}), 1.25);
  EXPECT_EQ(FindValue(b, "vigil_host_schedstat_waiting_seconds_total", {{"cpu", "1"}}), 0.5);
}

TEST(ProcSchedstatCollectorTest, TruncatedOrBadLineIsDataLoss) {
  std::vector<ProcSchedstatCollector::Cpu> cpus;

  EXPECT_EQ(ProcSchedstatCollector::Parse("cpu0 0 0 0 0 0 0 1 2\n", &cpus).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcSchedstatCollector::Parse("cpu0 0 0 0 0 0 0 1 2 x\n", &cpus).code(),
            StatusCode::kDataLoss);
}

TEST(ProcSchedstatCollectorTest, KernelWithoutSchedstatsIsAbsentWithAReason) {
  ScratchTree tree;
  ProcSchedstatCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_TRUE(IsAbsent(r.status));
  EXPECT_NE(r.status.message().find("CONFIG_SCHEDSTATS"), std::string::npos);
}

}  // namespace
}  // namespace vigil
