// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_numa_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr char kMemory[] = "vigil_host_numa_node_memory_bytes";
constexpr char kAllocations[] = "vigil_host_numa_node_allocations_total";

TEST(SysNumaCollectorTest, ReadsCapturedKernel618) {
  SysNumaCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, kMemory, {{"numa_node", "0"}, {"field", "MemTotal"}}), 14247708.0 * 1024);
  EXPECT_TRUE(FindValue(b, kMemory, {{"numa_node", "0"}, {"field", "Active_anon"}}));
  EXPECT_EQ(FindValue(b, "vigil_host_numa_node_hugepages",
                      {{"numa_node", "0"}, {"field", "HugePages_Total"}}),
            0);
  EXPECT_EQ(FindValue(b, kAllocations, {{"numa_node", "0"}, {"field", "interleave_hit"}}), 1135);
  EXPECT_EQ(CountSamples(b, kAllocations), 6u);
}

TEST(SysNumaCollectorTest, TwoNodesOneWithoutNumastat) {
  SysNumaCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, kMemory, {{"numa_node", "1"}, {"field", "MemFree"}}), 410000000.0 * 1024);
  EXPECT_EQ(FindValue(b, "vigil_host_numa_node_hugepages",
                      {{"numa_node", "1"}, {"field", "HugePages_Free"}}),
            256);
  EXPECT_EQ(CountSamples(b, kAllocations), 0u);
}

TEST(SysNumaCollectorTest, MalformedNodeKeepsTheOthers) {
  ScratchTree tree;
  tree.Write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:  100 kB\n");
  tree.Write("sys/devices/system/node/node0/numastat", "numa_hit 5\nnuma_miss\n");
  tree.Write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:  200 kB\n");
  SysNumaCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(FindValue(r.batch, kMemory, {{"numa_node", "1"}, {"field", "MemTotal"}}), 200 * 1024);
  EXPECT_EQ(FindValue(r.batch, kMemory, {{"numa_node", "0"}, {"field", "MemTotal"}}), 100 * 1024);
}

TEST(SysNumaCollectorTest, BadMeminfoLineIsDataLoss) {
  MetricBatch batch;
  MetricWriter writer(&batch);

  EXPECT_EQ(SysNumaCollector::ParseMeminfo("Node 0 MemTotal 100 kB\n", "0", writer).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(SysNumaCollector::ParseMeminfo("Node 0 MemTotal: x kB\n", "0", writer).code(),
            StatusCode::kDataLoss);
}

TEST(SysNumaCollectorTest, NoNodesIsAbsent) {
  ScratchTree tree;
  tree.MakeDir("sys/devices/system/node");
  SysNumaCollector empty(tree.paths());
  EXPECT_TRUE(IsAbsent(CollectOnce(empty).status));

  ScratchTree bare;
  SysNumaCollector none(bare.paths());
  EXPECT_TRUE(IsAbsent(CollectOnce(none).status));
}

}  // namespace
}  // namespace vigil
