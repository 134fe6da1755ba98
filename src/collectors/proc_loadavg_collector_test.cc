// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_loadavg_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

struct Expected {
  const char* kind;
  double load1, load5, load15, runnable, tasks;
};

TEST(ProcLoadavgCollectorTest, ReadsEveryFixture) {
  const Expected cases[] = {
      {"debian12_vm", 4.06, 1.37, 0.52, 5, 127},
      {"cgroupv2_numa_ib_host", 12.5, 10.25, 8.0, 9, 2345},
      {"old_kernel_4x", 0.25, 0.5, 0.75, 1, 200},
  };
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.kind);
    ProcLoadavgCollector collector(FixturePaths(e.kind));

    auto r = CollectOnce(collector);

    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_load1"), e.load1);
    EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_load5"), e.load5);
    EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_load15"), e.load15);
    EXPECT_EQ(FindValue(r.batch, "vigil_host_tasks_runnable"), e.runnable);
    EXPECT_EQ(FindValue(r.batch, "vigil_host_tasks"), e.tasks);
  }
}

TEST(ProcLoadavgCollectorTest, TruncatedFileIsDataLoss) {
  auto parsed = ProcLoadavgCollector::Parse("0.1 0.2\n");

  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
}

TEST(ProcLoadavgCollectorTest, GarbageIsDataLoss) {
  EXPECT_EQ(ProcLoadavgCollector::Parse("0.1 zz 0.3 1/2 3\n").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcLoadavgCollector::Parse("0.1 0.2 0.3 12 3\n").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcLoadavgCollector::Parse("0.1 0.2 0.3 1/x 3\n").status().code(),
            StatusCode::kDataLoss);
}

TEST(ProcLoadavgCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcLoadavgCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
