// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_edac_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

TEST(SysEdacCollectorTest, ReadsControllersCsrowsAndDimms) {
  SysEdacCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(MustFind(b, "vigil_host_edac_correctable_errors_total", {{"controller", "0"}}), 5);
  EXPECT_EQ(MustFind(b, "vigil_host_edac_uncorrectable_errors_total", {{"controller", "1"}}), 1);
  EXPECT_EQ(MustFind(b, "vigil_host_edac_csrow_correctable_errors_total",
                     {{"controller", "0"}, {"csrow", "0"}}),
            3);
  EXPECT_EQ(MustFind(b, "vigil_host_edac_csrow_correctable_errors_total",
                     {{"controller", "0"}, {"csrow", "unknown"}}),
            1);
  EXPECT_EQ(
      MustFind(
          b, "vigil_host_edac_dimm_uncorrectable_errors_total",
          {{"controller", "1"}, {"dimm", "dimm0"}, {"label", "CPU_SrcID#1_MC#0_Chan#0_DIMM#0"}}),
      1);
  // csrow0, csrow1 and "unknown" on mc0; mc1 has the dimm layout and no noinfo counts.
  EXPECT_EQ(CountSamples(b, "vigil_host_edac_csrow_correctable_errors_total"), 3u);
  // The csrow counts plus the unplaced ones add up to the controller's count.
  EXPECT_EQ(MustFind(b, "vigil_host_edac_csrow_correctable_errors_total",
                     {{"controller", "0"}, {"csrow", "0"}}) +
                MustFind(b, "vigil_host_edac_csrow_correctable_errors_total",
                         {{"controller", "0"}, {"csrow", "1"}}) +
                MustFind(b, "vigil_host_edac_csrow_correctable_errors_total",
                         {{"controller", "0"}, {"csrow", "unknown"}}),
            MustFind(b, "vigil_host_edac_correctable_errors_total", {{"controller", "0"}}));
}

TEST(SysEdacCollectorTest, HostsWithoutEdacAreAbsent) {
  SysEdacCollector collector(FixturePaths("debian12_vm"));

  EXPECT_EQ(CollectOnce(collector).status.code(), StatusCode::kNotFound);
}

TEST(SysEdacCollectorTest, GarbageCountIsDataLossAndTheRestStays) {
  ScratchTree tree;
  tree.Write("sys/devices/system/edac/mc/mc0/ce_count", "lots\n");
  tree.Write("sys/devices/system/edac/mc/mc0/ue_count", "0\n");
  SysEdacCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(MustFind(r.batch, "vigil_host_edac_uncorrectable_errors_total"), 0);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_edac_correctable_errors_total"), 0u);
}

}  // namespace
}  // namespace vigil
