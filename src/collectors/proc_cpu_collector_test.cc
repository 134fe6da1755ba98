// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_cpu_collector.h"

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

constexpr double kUserHz = 100;  // USER_HZ of the kernels the fixtures come from.

TEST(ProcCpuCollectorTest, ReadsCapturedDebianVm) {
  ProcCpuCollector collector(FixturePaths("debian12_vm"), kUserHz);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_host_cpu_seconds_total"), 3u * 8u);  // all, cpu0, cpu1.
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_cpu_seconds_total", {{"cpu", "all"}, {"mode", "user"}}),
                   217.11);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_cpu_seconds_total", {{"cpu", "1"}, {"mode", "iowait"}}),
                   3.27);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_cpu_seconds_total", {{"cpu", "0"}, {"mode", "steal"}}),
                   0.10);
  EXPECT_EQ(FindValue(b, "vigil_host_context_switches_total"), 401245);
  EXPECT_EQ(FindValue(b, "vigil_host_interrupts_total"), 218110);
  EXPECT_EQ(FindValue(b, "vigil_host_forks_total"), 12225);
  EXPECT_EQ(FindValue(b, "vigil_host_procs_running"), 5);
  EXPECT_EQ(FindValue(b, "vigil_host_procs_blocked"), 0);
  EXPECT_EQ(FindValue(b, "vigil_host_boot_time_seconds"), 1795946942);
}

TEST(ProcCpuCollectorTest, FirstReadingHasNoUtilization) {
  ProcCpuCollector collector(FixturePaths("debian12_vm"), kUserHz);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_cpu_utilization_ratio"), 0u);
}

TEST(ProcCpuCollectorTest, ReadsEightCpuHost) {
  ProcCpuCollector collector(FixturePaths("cgroupv2_numa_ib_host"), kUserHz);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_host_cpu_seconds_total"), 9u * 8u);
  // cpuN user = 1000 * (N + 1) ticks; the host-wide line is their sum, 36000 ticks.
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_cpu_seconds_total", {{"cpu", "7"}, {"mode", "user"}}),
                   80.0);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_cpu_seconds_total", {{"cpu", "all"}, {"mode", "user"}}),
                   360.0);
  EXPECT_DOUBLE_EQ(
      MustFind(b, "vigil_host_cpu_seconds_total", {{"cpu", "all"}, {"mode", "softirq"}}), 1.6);
  EXPECT_EQ(FindValue(b, "vigil_host_procs_running"), 9);
  EXPECT_EQ(FindValue(b, "vigil_host_procs_blocked"), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_interrupts_total"), 555555);
}

TEST(ProcCpuCollectorTest, ReadsOldKernel) {
  ProcCpuCollector collector(FixturePaths("old_kernel_4x"), kUserHz);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_DOUBLE_EQ(
      MustFind(r.batch, "vigil_host_cpu_seconds_total", {{"cpu", "0"}, {"mode", "nice"}}), 0.6);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_context_switches_total"), 1234567);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_boot_time_seconds"), 1500000000);
}

TEST(ProcCpuCollectorTest, UtilizationComesFromThePreviousReading) {
  ScratchTree tree;
  tree.Write("proc/stat", "cpu  100 0 100 700 100 0 0 0\ncpu0 100 0 100 700 100 0 0 0\n");
  ProcCpuCollector collector(tree.paths(), kUserHz);
  ASSERT_TRUE(CollectOnce(collector).status.ok());
  // Deltas: user 100, system 50, idle 300, iowait 50: 150 busy of 500.
  tree.Write("proc/stat", "cpu  200 0 150 1000 150 0 0 0\ncpu0 200 0 150 1000 150 0 0 0\n");

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_cpu_utilization_ratio", {{"cpu", "all"}}), 0.3);
  EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_cpu_utilization_ratio", {{"cpu", "0"}}), 0.3);
}

TEST(ProcCpuCollectorTest, UtilizationSkipsCountersThatWentBackwards) {
  ProcCpuCollector::CpuTicks before{.cpu = 0, .modes = 4, .ticks = {10, 0, 10, 80}};
  ProcCpuCollector::CpuTicks after{.cpu = 0, .modes = 4, .ticks = {5, 0, 10, 90}};

  EXPECT_FALSE(ProcCpuCollector::Utilization(before, after).has_value());
  EXPECT_FALSE(ProcCpuCollector::Utilization(before, before).has_value());
}

TEST(ProcCpuCollectorTest, TruncatedCpuLineIsDataLoss) {
  auto parsed = ProcCpuCollector::Parse("cpu  1 2\n");

  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("truncated"), std::string::npos);
}

TEST(ProcCpuCollectorTest, GarbageNumberIsDataLossWithThePath) {
  ScratchTree tree;
  tree.Write("proc/stat", "cpu  1 2 x3 4 5 6 7 8\n");
  ProcCpuCollector collector(tree.paths(), kUserHz);

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("bad number 'x3'"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("proc/stat"), std::string::npos);
  EXPECT_TRUE(r.batch.samples.empty());
}

TEST(ProcCpuCollectorTest, GarbageScalarIsDataLoss) {
  auto parsed = ProcCpuCollector::Parse("cpu  1 2 3 4\nctxt -5\n");

  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
}

TEST(ProcCpuCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcCpuCollector collector(tree.paths(), kUserHz);

  auto r = CollectOnce(collector);

  EXPECT_TRUE(IsAbsent(r.status)) << r.status.message();
}

}  // namespace
}  // namespace vigil
