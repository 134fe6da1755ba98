// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_nvme_collector.h"

#include <filesystem>

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

TEST(SysNvmeCollectorTest, OneInfoSeriesPerController) {
  SysNvmeCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_nvme_info"), 2u);
  EXPECT_EQ(MustFind(r.batch, "vigil_host_nvme_info",
                     {{"device", "nvme0"},
                      {"model", "SAMSUNG MZQL23T8HCLS-00A07"},
                      {"serial", "S64HNE0T123456"},
                      {"firmware_revision", "GDC5602Q"},
                      {"cntlid", "6"},
                      {"state", "live"}}),
            1);
  EXPECT_EQ(
      MustFind(r.batch, "vigil_host_nvme_info", {{"device", "nvme1"}, {"state", "resetting"}}), 1);
}

TEST(SysNvmeCollectorTest, HostsWithoutNvmeAreAbsent) {
  SysNvmeCollector collector(FixturePaths("debian12_vm"));

  EXPECT_EQ(CollectOnce(collector).status.code(), StatusCode::kNotFound);
}

TEST(SysNvmeCollectorTest, StateIsReadEveryTickAndARemovedControllerGoes) {
  ScratchTree tree;
  tree.Write("sys/class/nvme/nvme0/model", "A\n");
  tree.Write("sys/class/nvme/nvme0/state", "live\n");
  tree.Write("sys/class/nvme/nvme1/state", "live\n");
  SysNvmeCollector collector(tree.paths(), /*rescan_every=*/1000);
  ASSERT_TRUE(CollectOnce(collector).status.ok());

  tree.Write("sys/class/nvme/nvme0/state", "dead\n");
  std::filesystem::remove_all(tree.paths().sys_root + "/class/nvme/nvme1");
  auto r = CollectOnce(collector);

  EXPECT_EQ(FindValue(r.batch, "vigil_host_nvme_info", {{"device", "nvme0"}, {"state", "dead"}}),
            1);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_nvme_info"), 1u);
}

}  // namespace
}  // namespace vigil
