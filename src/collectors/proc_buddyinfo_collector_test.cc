// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_buddyinfo_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr char kFamily[] = "vigil_host_buddy_free_blocks";

TEST(ProcBuddyinfoCollectorTest, ReadsCapturedKernel618) {
  ProcBuddyinfoCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, kFamily), 33u);  // DMA, DMA32, Normal x 11 orders.
  EXPECT_EQ(FindValue(b, kFamily, {{"numa_node", "0"}, {"zone", "DMA"}, {"order", "10"}}), 3);
  EXPECT_EQ(FindValue(b, kFamily, {{"numa_node", "0"}, {"zone", "DMA32"}, {"order", "10"}}), 752);
}

TEST(ProcBuddyinfoCollectorTest, TwoNodes) {
  ScratchTree tree;
  tree.Write("proc/buddyinfo",
             "Node 0, zone   Normal   1   2   3\n"
             "Node 1, zone   Normal  10  20  30\n");
  ProcBuddyinfoCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, kFamily, {{"numa_node", "1"}, {"zone", "Normal"}, {"order", "2"}}),
            30);
  EXPECT_EQ(FindValue(r.batch, kFamily, {{"numa_node", "0"}, {"zone", "Normal"}, {"order", "0"}}),
            1);
}

TEST(ProcBuddyinfoCollectorTest, MalformedLinesAreDataLoss) {
  MetricBatch batch;
  MetricWriter writer(&batch);

  EXPECT_EQ(ProcBuddyinfoCollector::Parse("Node 0 zone Normal 1\n", writer).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcBuddyinfoCollector::Parse("Node 0, zone Normal 1 x\n", writer).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcBuddyinfoCollector::Parse("Node x, zone Normal 1\n", writer).code(),
            StatusCode::kDataLoss);
}

TEST(ProcBuddyinfoCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcBuddyinfoCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
