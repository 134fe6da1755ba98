// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_pressure_collector.h"

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

TEST(ProcPressureCollectorTest, ConvertsMicrosecondsAndPercent) {
  auto p = ProcPressureCollector::Parse(
      "some avg10=12.34 avg60=0.00 avg300=0.00 total=2500000\n"
      "full avg10=1.50 avg60=0.00 avg300=0.00 total=500000\n");

  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->some.total_seconds, 2.5);
  EXPECT_DOUBLE_EQ(p->some.avg10_ratio, 0.1234);
  ASSERT_TRUE(p->full.has_value());
  EXPECT_DOUBLE_EQ(p->full->total_seconds, 0.5);
  EXPECT_DOUBLE_EQ(p->full->avg10_ratio, 0.015);
}

TEST(ProcPressureCollectorTest, CpuWithoutFullLineBeforeLinux513) {
  auto p = ProcPressureCollector::Parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");

  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->full.has_value());
  EXPECT_DOUBLE_EQ(p->some.total_seconds, 7e-6);
}

TEST(ProcPressureCollectorTest, ReadsCapturedDebianVm) {
  ProcPressureCollector collector(FixturePaths("debian12_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_pressure_waiting_seconds_total", {{"resource", "cpu"}}),
                   77.254929);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_pressure_waiting_ratio", {{"resource", "cpu"}}), 0.9198);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_pressure_stalled_seconds_total", {{"resource", "io"}}),
                   2.926223);
  EXPECT_EQ(FindValue(b, "vigil_host_pressure_stalled_seconds_total", {{"resource", "memory"}}), 0);
}

TEST(ProcPressureCollectorTest, ReadsFullLinesForEveryResource) {
  ProcPressureCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_host_pressure_stalled_seconds_total"), 3u);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_pressure_stalled_seconds_total", {{"resource", "cpu"}}),
                   23.456789);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_pressure_stalled_ratio", {{"resource", "cpu"}}), 0.015);
  EXPECT_DOUBLE_EQ(
      MustFind(b, "vigil_host_pressure_waiting_seconds_total", {{"resource", "memory"}}), 5.0);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_pressure_waiting_ratio", {{"resource", "io"}}), 0.03);
}

TEST(ProcPressureCollectorTest, KernelWithoutPsiIsAbsent) {
  ProcPressureCollector collector(FixturePaths("old_kernel_4x"));

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kNotFound);
  EXPECT_NE(r.status.message().find("absent kernel support"), std::string::npos);
  EXPECT_TRUE(r.batch.samples.empty());
}

TEST(ProcPressureCollectorTest, MalformedFileKeepsTheOtherResources) {
  ScratchTree tree;
  tree.Write("proc/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n");
  tree.Write("proc/pressure/memory", "some avg10=abc avg60=0.00 avg300=0.00 total=1\n");
  tree.Write("proc/pressure/io", "some avg10=0.00 avg60=0.00 avg300=0.00 total=2000000\n");
  ProcPressureCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("pressure/memory"), std::string::npos) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_pressure_waiting_seconds_total", {{"resource", "io"}}),
            2.0);
  EXPECT_FALSE(
      FindValue(r.batch, "vigil_host_pressure_waiting_seconds_total", {{"resource", "memory"}}));
}

TEST(ProcPressureCollectorTest, TruncatedOrEmptyFileIsDataLoss) {
  EXPECT_EQ(ProcPressureCollector::Parse("some avg10=0.00 avg60=0.00\n").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ProcPressureCollector::Parse("").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ProcPressureCollector::Parse("some avg10=1 total=-4\n").status().code(),
            StatusCode::kDataLoss);
}

TEST(ProcPressureCollectorTest, MissingFileInsidePressureDirIsAFailure) {
  ScratchTree tree;
  tree.Write("proc/pressure/cpu", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
  ProcPressureCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(IsAbsent(r.status)) << r.status.message();
  EXPECT_TRUE(
      FindValue(r.batch, "vigil_host_pressure_waiting_seconds_total", {{"resource", "cpu"}}));
}

}  // namespace
}  // namespace vigil
