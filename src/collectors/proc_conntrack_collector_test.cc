// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_conntrack_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(ProcConntrackCollectorTest, ReadsCapturedKernel618) {
  ProcConntrackCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_conntrack_entries"), 0);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_conntrack_entries_limit"), 262144);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_conntrack_search_restarts_total"), 0);
  EXPECT_EQ(r.batch.samples.size(), 10u);
}

TEST(ProcConntrackCollectorTest, SumsStatColumnsOverCpusByName) {
  ScratchTree tree;
  tree.Write("proc/sys/net/netfilter/nf_conntrack_count", "1234\n");
  tree.Write("proc/sys/net/netfilter/nf_conntrack_max", "65536\n");
  // An older layout (kernel 4.x): more columns, in another order; values are hex.
  tree.Write("proc/net/stat/nf_conntrack",
             "entries  searched found new invalid ignore delete delete_list insert insert_failed "
             "drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n"
             "000004d2  00000000 00000010 00000000 00000001 00000002 00000000 00000000 00000003 "
             "00000004 00000005 00000006 00000000  00000000 00000000 00000000 00000007\n"
             "000004d2  00000000 000000f0 00000000 00000001 00000002 00000000 00000000 00000003 "
             "00000004 00000005 00000006 00000000  00000000 00000000 00000000 00000007\n");
  ProcConntrackCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_entries"), 1234);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_entries_limit"), 65536);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_found_total"), 0x10 + 0xf0);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_invalid_total"), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_ignored_total"), 4);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_inserted_total"), 6);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_insert_failed_total"), 8);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_dropped_total"), 10);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_early_dropped_total"), 12);
  EXPECT_EQ(FindValue(b, "vigil_host_conntrack_search_restarts_total"), 14);
}

TEST(ProcConntrackCollectorTest, WithoutStatFileOnlyTheGauges) {
  ScratchTree tree;
  tree.Write("proc/sys/net/netfilter/nf_conntrack_count", "5\n");
  tree.Write("proc/sys/net/netfilter/nf_conntrack_max", "10\n");
  ProcConntrackCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.batch.samples.size(), 2u);
}

TEST(ProcConntrackCollectorTest, ModuleNotLoadedIsAbsentWithAReason) {
  ScratchTree tree;
  ProcConntrackCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_TRUE(IsAbsent(r.status));
  EXPECT_NE(r.status.message().find("nf_conntrack module"), std::string::npos);
}

TEST(ProcConntrackCollectorTest, MalformedValuesAreDataLoss) {
  ScratchTree tree;
  tree.Write("proc/sys/net/netfilter/nf_conntrack_count", "lots\n");
  ProcConntrackCollector collector(tree.paths());

  EXPECT_EQ(CollectOnce(collector).status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(ProcConntrackCollector::ParseStat("found\nzz\n").status().code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace vigil
