// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_mdstat_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

TEST(ProcMdstatCollectorTest, ReadsArraysInEveryState) {
  ProcMdstatCollector collector(FixturePaths("gpu_node_hw"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  auto disks = [&](const char* md, const char* state) {
    return MustFind(b, "vigil_host_md_disks", {{"device", md}, {"state", state}});
  };
  auto state = [&](const char* md, const char* s) {
    return MustFind(b, "vigil_host_md_state", {{"device", md}, {"state", s}});
  };
  // md127: a healthy mirror.
  EXPECT_EQ(state("md127", "active"), 1);
  EXPECT_EQ(state("md127", "recovering"), 0);
  EXPECT_EQ(disks("md127", "active"), 2);
  EXPECT_EQ(disks("md127", "down"), 0);
  EXPECT_EQ(MustFind(b, "vigil_host_md_disks_required", {{"device", "md127"}}), 2);
  EXPECT_EQ(MustFind(b, "vigil_host_md_size_bytes", {{"device", "md127"}}), 1953382464.0 * 1024);
  EXPECT_EQ(MustFind(b, "vigil_host_md_synced_bytes", {{"device", "md127"}}), 1953382464.0 * 1024);
  EXPECT_EQ(MustFind(b, "vigil_host_md_sync_completed_ratio", {{"device", "md127"}}), 1);
  // md0: raid5 with one member failed, rebuilding onto a spare.
  EXPECT_EQ(state("md0", "recovering"), 1);
  EXPECT_EQ(state("md0", "active"), 0);
  EXPECT_EQ(disks("md0", "active"), 2);
  EXPECT_EQ(disks("md0", "failed"), 1);
  EXPECT_EQ(disks("md0", "spare"), 1);
  EXPECT_EQ(disks("md0", "down"), 1);
  EXPECT_EQ(MustFind(b, "vigil_host_md_disks_required", {{"device", "md0"}}), 3);
  EXPECT_EQ(MustFind(b, "vigil_host_md_synced_bytes", {{"device", "md0"}}), 166264704.0 * 1024);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_md_sync_completed_ratio", {{"device", "md0"}}),
                   166264704.0 / 1953382400.0);  // mdstat prints it truncated: 8.5%.
  // md2: raid0 has no [n/m]: every member is required and active.
  EXPECT_EQ(state("md2", "active"), 1);
  EXPECT_EQ(disks("md2", "active"), 2);
  EXPECT_EQ(MustFind(b, "vigil_host_md_disks_required", {{"device", "md2"}}), 2);
  // md3: resync queued behind md0.
  EXPECT_EQ(state("md3", "resync"), 1);
  EXPECT_EQ(disks("md3", "active"), 4);
  EXPECT_EQ(MustFind(b, "vigil_host_md_sync_completed_ratio", {{"device", "md3"}}), 0);
  // md1: assembled but not started.
  EXPECT_EQ(state("md1", "inactive"), 1);
  EXPECT_EQ(disks("md1", "spare"), 1);
  EXPECT_EQ(disks("md1", "active"), 0);
  EXPECT_EQ(CountSamples(b, "vigil_host_md_size_bytes"), 5u);
  EXPECT_EQ(CountSamples(b, "vigil_host_md_state"), 5u * 6);
}

TEST(ProcMdstatCollectorTest, ParsesCheckAndReshapeActions) {
  const char* text =
      "Personalities : [raid6]\n"
      "md4 : active raid6 sda[0] sdb[1] sdc[2] sdd[3]\n"
      "      200 blocks super 1.2 level 6, 512k chunk, algorithm 2 [4/4] [UUUU]\n"
      "      [====>................]  check = 25.0% (50/200) finish=1.0min speed=1K/sec\n"
      "\n"
      "md5 : active raid5 sda[0] sdb[1] sdc[2]\n"
      "      100 blocks super 1.2 level 5, 512k chunk, algorithm 2 [3/3] [UUU]\n"
      "      [>....................]  reshape =  1.0% (1/100) finish=9.0min speed=1K/sec\n"
      "\n"
      "unused devices: <none>\n";

  auto arrays = ProcMdstatCollector::Parse(text);

  ASSERT_TRUE(arrays.ok()) << arrays.status().message();
  ASSERT_EQ(arrays->size(), 2u);
  EXPECT_EQ((*arrays)[0].state, "check");
  EXPECT_EQ((*arrays)[0].blocks_synced, 50u);
  EXPECT_DOUBLE_EQ((*arrays)[0].sync_ratio, 0.25);
  EXPECT_EQ((*arrays)[1].state, "reshape");
}

TEST(ProcMdstatCollectorTest, MalformedArraysAreDataLoss) {
  for (const char* text :
       {"md0 : active raid1 sda[0]\n      lots blocks\n", "md0 : active raid1 sda[0]\n",
        "md0 : broken raid1 sda[0]\n      10 blocks\n",
        "md0 : active raid1 sda[0]\n      10 blocks [x/2] [U_]\n",
        "md0 : active raid1 sda[0] sdb[1]\n      10 blocks [2/2] [UU]\n"
        "      [=>..]  recovery =  5.0% (x/10) finish=1min\n"}) {
    EXPECT_EQ(ProcMdstatCollector::Parse(text).status().code(), StatusCode::kDataLoss) << text;
  }
}

TEST(ProcMdstatCollectorTest, NoMdstatOrNoArraysIsAbsent) {
  ProcMdstatCollector none(FixturePaths("debian12_vm"));
  EXPECT_EQ(CollectOnce(none).status.code(), StatusCode::kNotFound);
  ScratchTree tree;
  tree.Write("proc/mdstat", "Personalities : \nunused devices: <none>\n");
  ProcMdstatCollector empty(tree.paths());
  EXPECT_EQ(CollectOnce(empty).status.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
