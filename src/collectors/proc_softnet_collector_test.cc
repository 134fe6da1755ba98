// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_softnet_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(ProcSoftnetCollectorTest, ReadsCapturedKernel618) {
  ProcSoftnetCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_softnet_processed_packets_total"), 2u);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_softnet_processed_packets_total", {{"cpu", "0"}}), 0x11);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_softnet_processed_packets_total", {{"cpu", "1"}}),
            0xde8);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_softnet_backlog_packets", {{"cpu", "1"}}), 0);
}

TEST(ProcSoftnetCollectorTest, UsesTheCpuColumnAndHexValues) {
  ScratchTree tree;
  // CPU 1 offline: the second line is CPU 2 (column 13).
  tree.Write("proc/net/softnet_stat",
             "0000ffff 00000002 0000000a 00000000 00000000 00000000 00000000 00000000 00000001 "
             "00000010 00000003 00000004 00000000\n"
             "00000100 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 "
             "00000020 00000000 00000000 00000002\n");
  ProcSoftnetCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels cpu0 = {{"cpu", "0"}};
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_processed_packets_total", cpu0), 65535);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_dropped_packets_total", cpu0), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_squeezed_total", cpu0), 10);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_cpu_collisions_total", cpu0), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_received_rps_total", cpu0), 16);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_flow_limited_packets_total", cpu0), 3);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_backlog_packets", cpu0), 4);
  EXPECT_EQ(FindValue(b, "vigil_host_softnet_processed_packets_total", {{"cpu", "2"}}), 256);
  EXPECT_FALSE(FindValue(b, "vigil_host_softnet_processed_packets_total", {{"cpu", "1"}}));
}

TEST(ProcSoftnetCollectorTest, OldKernelWithoutBacklogColumn) {
  std::vector<ProcSoftnetCollector::Cpu> cpus;

  ASSERT_TRUE(ProcSoftnetCollector::Parse("00000005 00000000 00000000 00000000 00000000 00000000 "
                                          "00000000 00000000 00000000 00000000 00000007\n",
                                          &cpus)
                  .ok());

  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_EQ(cpus[0].columns, 11);
  EXPECT_EQ(cpus[0].v[0], 5u);
  EXPECT_EQ(cpus[0].v[10], 7u);
}

TEST(ProcSoftnetCollectorTest, MalformedLinesAreDataLoss) {
  std::vector<ProcSoftnetCollector::Cpu> cpus;

  EXPECT_EQ(ProcSoftnetCollector::Parse("0000000g 0 0 0 0 0 0 0 0\n", &cpus).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcSoftnetCollector::Parse("00000001 00000002\n", &cpus).code(),
            StatusCode::kDataLoss);
}

TEST(ProcSoftnetCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcSoftnetCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
