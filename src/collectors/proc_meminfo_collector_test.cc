// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_meminfo_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

constexpr double kKiB = 1024;

TEST(ProcMeminfoCollectorTest, ReadsCapturedDebianVm) {
  ProcMeminfoCollector collector(FixturePaths("debian12_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_memory_total_bytes"), 24684084 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_free_bytes"), 22977184 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_available_bytes"), 23674372 * kKiB);
  // 24684084 - 22977184 free - 4324 buffers - 879268 cached - 68944 SReclaimable.
  EXPECT_EQ(FindValue(b, "vigil_host_memory_used_bytes"), 754364 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_dirty_bytes"), 101504 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_shmem_bytes"), 8872 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_swap_total_bytes"), 0);
  EXPECT_EQ(FindValue(b, "vigil_host_hugepages"), 0);
  EXPECT_EQ(FindValue(b, "vigil_host_hugepage_size_bytes"), 2048 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_numa_memory_total_bytes", {{"numa_node", "0"}}),
            5859532 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_numa_memory_used_bytes", {{"numa_node", "0"}}),
            1711448 * kKiB);
}

TEST(ProcMeminfoCollectorTest, EveryOtherFieldIsExportedByName) {
  ProcMeminfoCollector collector(FixturePaths("debian12_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_meminfo_bytes", {{"field", "Active_anon"}}), 1664 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_meminfo_bytes", {{"field", "Committed_AS"}}), 709208 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_meminfo_bytes", {{"field", "VmallocTotal"}}),
            34359738367.0 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_meminfo_bytes", {{"field", "SReclaimable"}}), 68944 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_hugepages_reserved"), 0);
  // Fields with a family of their own are not repeated.
  EXPECT_FALSE(FindValue(b, "vigil_host_meminfo_bytes", {{"field", "MemFree"}}));
  EXPECT_FALSE(FindValue(b, "vigil_host_meminfo_bytes", {{"field", "Hugepagesize"}}));
}

TEST(ProcMeminfoCollectorTest, ReadsTwoNumaNodes) {
  ProcMeminfoCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  // 1056964608 - 800000000 - 100000 - 120000000 - 5000000.
  EXPECT_EQ(FindValue(b, "vigil_host_memory_used_bytes"), 131864608 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_available_bytes"), 950000000 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_cached_bytes"), 120000000 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_memory_buffers_bytes"), 100000 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_swap_free_bytes"), 8388604 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_hugepages"), 1024);
  EXPECT_EQ(FindValue(b, "vigil_host_hugepages_free"), 512);
  EXPECT_EQ(CountSamples(b, "vigil_host_numa_memory_total_bytes"), 2u);
  EXPECT_EQ(FindValue(b, "vigil_host_numa_memory_free_bytes", {{"numa_node", "1"}}),
            410000000 * kKiB);
  EXPECT_EQ(FindValue(b, "vigil_host_numa_memory_used_bytes", {{"numa_node", "0"}}),
            138482304 * kKiB);
}

TEST(ProcMeminfoCollectorTest, EstimatesAvailableWithoutMemAvailable) {
  auto parsed =
      ProcMeminfoCollector::Parse(*ReadSmallFile(FixturePaths("old_kernel_4x").Proc("meminfo")));

  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_TRUE(parsed->available_estimated);
  // MemFree 8000000 + Buffers 200000 + Cached 4000000.
  EXPECT_EQ(parsed->mem_available, 12200000 * 1024ull);
}

TEST(ProcMeminfoCollectorTest, ReadsOldKernelWithoutNuma) {
  ProcMeminfoCollector collector(FixturePaths("old_kernel_4x"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_available_bytes"), 12200000 * kKiB);
  // 16384000 - 8000000 - 200000 - 4000000 - 300000.
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_used_bytes"), 3884000 * kKiB);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_numa_memory_total_bytes"), 0u);
}

TEST(ProcMeminfoCollectorTest, GarbageNumberIsDataLoss) {
  auto parsed = ProcMeminfoCollector::Parse("MemTotal: 12x kB\nMemFree: 1 kB\n");

  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("12x"), std::string::npos);
}

TEST(ProcMeminfoCollectorTest, TruncatedOrIncompleteFileIsDataLoss) {
  EXPECT_EQ(ProcMeminfoCollector::Parse("MemTotal: 100 kB\nMemFree:").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcMeminfoCollector::Parse("MemTotal: 100 kB\n").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcMeminfoCollector::Parse("MemTotal 100 kB\nMemFree: 1 kB\n").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcMeminfoCollector::Parse("MemTotal: 100 MB\nMemFree: 1 kB\n").status().code(),
            StatusCode::kDataLoss);
}

TEST(ProcMeminfoCollectorTest, BadNumaNodeKeepsTheOtherSamples) {
  ScratchTree tree;
  tree.Write("proc/meminfo", "MemTotal: 100 kB\nMemFree: 50 kB\n");
  tree.Write("sys/devices/system/node/node0/meminfo",
             "Node 0 MemTotal: 60 kB\nNode 0 MemFree: 20 kB\n");
  tree.Write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal: oops kB\n");
  ProcMeminfoCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("node1"), std::string::npos) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_total_bytes"), 100 * kKiB);
  // Node 0 has no MemUsed line: used is total - free.
  EXPECT_EQ(FindValue(r.batch, "vigil_host_numa_memory_used_bytes", {{"numa_node", "0"}}),
            40 * kKiB);
}

TEST(ProcMeminfoCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcMeminfoCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
