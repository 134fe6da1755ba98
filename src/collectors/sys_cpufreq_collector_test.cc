// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_cpufreq_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

TEST(SysCpufreqCollectorTest, ReadsFrequenciesInHertzAndGovernors) {
  SysCpufreqCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_frequency_hertz", {{"cpu", "0"}}), 2.1e9);
  EXPECT_EQ(CountSamples(b, "vigil_host_cpu_frequency_hertz"), 1u) << "root-only file on cpu0 only";
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_frequency_min_hertz", {{"cpu", "10"}}), 8e8);
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_frequency_max_hertz", {{"cpu", "1"}}), 3.8e9);
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_scaling_frequency_hertz", {{"cpu", "1"}}), 1.2e9);
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_scaling_frequency_hertz", {{"cpu", "10"}}), 3.4e9);
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_scaling_frequency_max_hertz", {{"cpu", "0"}}), 3.5e9);
  EXPECT_EQ(MustFind(b, "vigil_host_cpu_scaling_frequency_min_hertz", {{"cpu", "0"}}), 8e8);
  EXPECT_EQ(CountSamples(b, "vigil_host_cpu_scaling_frequency_hertz"), 3u) << "cpu2 has none";
  EXPECT_EQ(
      MustFind(b, "vigil_host_cpu_scaling_governor", {{"cpu", "1"}, {"governor", "powersave"}}), 1);
  EXPECT_EQ(
      MustFind(b, "vigil_host_cpu_scaling_governor", {{"cpu", "1"}, {"governor", "performance"}}),
      0);
  EXPECT_EQ(CountSamples(b, "vigil_host_cpu_scaling_governor"), 6u);
  // Numeric CPU order: cpu10 comes last.
  std::vector<std::string> order;
  for (const Sample& s : b.samples) {
    if (s.desc->name == "vigil_host_cpu_scaling_frequency_hertz") {
      order.emplace_back(LabelValue(s.labels, "cpu"));
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"0", "1", "10"}));
}

TEST(SysCpufreqCollectorTest, HostsWithoutCpufreqAreAbsent) {
  for (const char* kind : {"debian12_vm", "cgroupv2_numa_ib_host"}) {
    SysCpufreqCollector collector(FixturePaths(kind));

    auto r = CollectOnce(collector);

    EXPECT_EQ(r.status.code(), StatusCode::kNotFound) << kind << ": " << r.status.message();
  }
}

TEST(SysCpufreqCollectorTest, GovernorWithoutAvailableListIsStillExported) {
  ScratchTree tree;
  tree.Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "999\n");
  tree.Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "schedutil\n");
  SysCpufreqCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_cpu_scaling_frequency_hertz"), 999000);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_cpu_scaling_governor", {{"governor", "schedutil"}}), 1);
}

}  // namespace
}  // namespace vigil
