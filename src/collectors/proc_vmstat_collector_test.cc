// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_vmstat_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(ProcVmstatCollectorTest, ReadsCapturedKernel618) {
  ProcVmstatCollector collector(FixturePaths("debian12_k618_vm"), 4096);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_paged_in_bytes_total"), 1361233.0 * 1024);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_paged_out_bytes_total"), 2709468.0 * 1024);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_page_faults_total"), 8927397);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_major_page_faults_total"), 1006);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_swap_in_bytes_total"), 0);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_oom_kills_total"), 0);
}

TEST(ProcVmstatCollectorTest, SwapPagesUseThePageSizeAndOldKernelsHaveNoOomKill) {
  ProcVmstatCollector collector(FixturePaths("old_kernel_4x"), 65536);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_swap_in_bytes_total"), 12.0 * 65536);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_swap_out_bytes_total"), 34.0 * 65536);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_memory_paged_in_bytes_total"), 200000.0 * 1024);
  EXPECT_FALSE(FindValue(r.batch, "vigil_host_oom_kills_total"));
  EXPECT_EQ(r.batch.samples.size(), 6u);
}

TEST(ProcVmstatCollectorTest, BadNumberIsDataLoss) {
  auto parsed = ProcVmstatCollector::Parse("pgfault 12x\n");

  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("12x"), std::string::npos);
}

TEST(ProcVmstatCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcVmstatCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
