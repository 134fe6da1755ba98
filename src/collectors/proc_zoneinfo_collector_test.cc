// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_zoneinfo_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr char kMemory[] = "vigil_host_zone_memory_bytes";

TEST(ProcZoneinfoCollectorTest, ReadsCapturedKernel618) {
  ProcZoneinfoCollector collector(FixturePaths("debian12_k618_vm"), 4096);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels dma = {{"numa_node", "0"}, {"zone", "DMA"}};
  auto with = [](Labels l, std::string k, std::string v) {
    l.emplace_back(std::move(k), std::move(v));
    return l;
  };
  EXPECT_EQ(FindValue(b, kMemory, with(dma, "kind", "free")), 3840.0 * 4096);
  EXPECT_EQ(FindValue(b, kMemory, with(dma, "kind", "min")), 33.0 * 4096);
  EXPECT_EQ(FindValue(b, kMemory, with(dma, "kind", "managed")), 3840.0 * 4096);
  EXPECT_EQ(FindValue(b, "vigil_host_zone_protection_bytes", with(dma, "index", "1")),
            3018.0 * 4096);
  EXPECT_EQ(FindValue(b, "vigil_host_zone_numa_allocations_total",
                      {{"numa_node", "0"}, {"zone", "Normal"}, {"outcome", "hit"}}),
            8205480);
  // Five zones (DMA, DMA32, Normal, Movable, Device), five protection entries each.
  EXPECT_EQ(CountSamples(b, "vigil_host_zone_protection_bytes"), 25u);
  // Per-node statistics are not zone values.
  EXPECT_FALSE(FindValue(b, kMemory, with(dma, "kind", "nr_inactive_anon")));
}

TEST(ProcZoneinfoCollectorTest, HandWrittenTwoNodes) {
  ScratchTree tree;
  tree.Write("proc/zoneinfo",
             "Node 0, zone   Normal\n"
             "  per-node stats\n"
             "      nr_inactive_anon 5\n"
             "      numa_hit 999\n"
             "  pages free     100\n"
             "        min      10\n"
             "        low      12\n"
             "        high     14\n"
             "        spanned  300\n"
             "        present  250\n"
             "        managed  200\n"
             "        protection: (0, 0)\n"
             "      nr_free_pages 100\n"
             "      numa_hit     7\n"
             "      numa_miss    1\n"
             "  pagesets\n"
             "    cpu: 0\n"
             "              count: 3\n"
             "              high:  42\n"
             "Node 1, zone   Normal\n"
             "  pages free     50\n"
             "        min      5\n"
             "      numa_foreign 2\n");
  ProcZoneinfoCollector collector(tree.paths(), 65536);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels n0 = {{"numa_node", "0"}, {"zone", "Normal"}};
  auto kind = [&](std::string node, std::string k) {
    return FindValue(b, kMemory, {{"numa_node", node}, {"zone", "Normal"}, {"kind", k}});
  };
  EXPECT_EQ(kind("0", "free"), 100.0 * 65536);
  EXPECT_EQ(kind("0", "low"), 12.0 * 65536);
  EXPECT_EQ(kind("0", "high"), 14.0 * 65536);  // Not the pageset's "high:".
  EXPECT_EQ(kind("0", "spanned"), 300.0 * 65536);
  EXPECT_EQ(kind("0", "present"), 250.0 * 65536);
  EXPECT_EQ(kind("1", "free"), 50.0 * 65536);
  EXPECT_EQ(kind("1", "min"), 5.0 * 65536);
  EXPECT_EQ(FindValue(b, "vigil_host_zone_numa_allocations_total",
                      {{"numa_node", "0"}, {"outcome", "hit"}}),
            7);  // The zone's, not the per-node line's 999.
  EXPECT_EQ(FindValue(b, "vigil_host_zone_numa_allocations_total",
                      {{"numa_node", "1"}, {"outcome", "foreign"}}),
            2);
}

TEST(ProcZoneinfoCollectorTest, MalformedValuesAreDataLoss) {
  MetricBatch batch;
  MetricWriter writer(&batch);

  EXPECT_EQ(ProcZoneinfoCollector::Parse("Node 0, zone N\n  pages free x\n", 4096, writer).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcZoneinfoCollector::Parse("Node 0, zone N\n  pages free 1\n  protection: 1, 2\n",
                                         4096, writer)
                .code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcZoneinfoCollector::Parse("Node zero zone N\n", 4096, writer).code(),
            StatusCode::kDataLoss);
}

TEST(ProcZoneinfoCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcZoneinfoCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
