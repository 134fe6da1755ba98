// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_sys_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

TEST(ProcSysCollectorTest, ReadsCapturedKernel618) {
  ProcSysCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_file_descriptors_allocated"), 1583);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_file_descriptors_limit"), 2466165);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_entropy_available"), 256);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_entropy_pool_size"), 256);
}

TEST(ProcSysCollectorTest, OldKernelPoolSize) {
  ScratchTree tree;
  tree.Write("proc/sys/fs/file-nr", "9824\t0\t9223372036854775807\n");
  tree.Write("proc/sys/kernel/random/entropy_avail", "3754\n");
  tree.Write("proc/sys/kernel/random/poolsize", "4096\n");
  ProcSysCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_file_descriptors_allocated"), 9824);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_file_descriptors_limit"), 9223372036854775807.0);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_entropy_available"), 3754);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_entropy_pool_size"), 4096);
}

TEST(ProcSysCollectorTest, MissingRandomKeepsFileHandlesAndIsAFailure) {
  ScratchTree tree;
  tree.Write("proc/sys/fs/file-nr", "10 0 100\n");
  ProcSysCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_file_descriptors_limit"), 100);
}

TEST(ProcSysCollectorTest, MalformedFileNrIsDataLoss) {
  ScratchTree tree;
  tree.Write("proc/sys/fs/file-nr", "10 0\n");
  ProcSysCollector truncated(tree.paths());
  EXPECT_EQ(CollectOnce(truncated).status.code(), StatusCode::kDataLoss);

  tree.Write("proc/sys/fs/file-nr", "10 0 -1\n");
  ProcSysCollector negative(tree.paths());
  EXPECT_EQ(CollectOnce(negative).status.code(), StatusCode::kDataLoss);
}

TEST(ProcSysCollectorTest, MissingFileNrIsAbsent) {
  ScratchTree tree;
  ProcSysCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
