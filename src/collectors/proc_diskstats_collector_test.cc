// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_diskstats_collector.h"

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

TEST(ProcDiskstatsCollectorTest, ReadsCapturedDebianVm20Fields) {
  ProcDiskstatsCollector collector(FixturePaths("debian12_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels vda = {{"device", "vda"}};
  EXPECT_EQ(CountSamples(b, "vigil_host_disk_reads_completed_total"), 1u);  // loop*, zram0 skipped.
  EXPECT_EQ(FindValue(b, "vigil_host_disk_reads_completed_total", vda), 34101);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_read_bytes_total", vda), 3470178.0 * 512);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_disk_read_time_seconds_total", vda), 15.988);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_writes_completed_total", vda), 8966);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_written_bytes_total", vda), 3716104.0 * 512);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_disk_write_time_seconds_total", vda), 10.914);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_io_in_progress", vda), 0);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_disk_io_time_seconds_total", vda), 7.68);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_disk_io_time_weighted_seconds_total", vda), 27.807);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_discards_completed_total", vda), 5145);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_discarded_bytes_total", vda), 1747632.0 * 512);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_flush_requests_total", vda), 823);
}

TEST(ProcDiskstatsCollectorTest, SkipsPartitionsAndLoopDevices) {
  ProcDiskstatsCollector collector(FixturePaths("cgroupv2_numa_ib_host"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_host_disk_reads_completed_total"),
            3u);  // nvme0n1, nvme1n1, dm-0
  EXPECT_FALSE(FindValue(b, "vigil_host_disk_reads_completed_total", {{"device", "nvme0n1p1"}}));
  EXPECT_FALSE(FindValue(b, "vigil_host_disk_reads_completed_total", {{"device", "loop0"}}));
  const Labels nvme0 = {{"device", "nvme0n1"}};
  EXPECT_EQ(FindValue(b, "vigil_host_disk_read_bytes_total", nvme0), 200000000.0 * 512);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_io_in_progress", nvme0), 3);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_disk_io_time_weighted_seconds_total", nvme0), 900.0);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_flush_requests_total", nvme0), 4000);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_written_bytes_total", {{"device", "dm-0"}}),
            4800.0 * 512);
}

TEST(ProcDiskstatsCollectorTest, ReadsOldKernel14Fields) {
  ProcDiskstatsCollector collector(FixturePaths("old_kernel_4x"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  const Labels sda = {{"device", "sda"}};
  EXPECT_EQ(CountSamples(b, "vigil_host_disk_reads_completed_total"), 1u);  // sr0 skipped.
  EXPECT_EQ(FindValue(b, "vigil_host_disk_written_bytes_total", sda), 64000.0 * 512);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_disk_io_time_seconds_total", sda), 6.0);
  EXPECT_EQ(FindValue(b, "vigil_host_disk_io_in_progress", sda), 1);
  EXPECT_EQ(CountSamples(b, "vigil_host_disk_discards_completed_total"), 0u);
  EXPECT_EQ(CountSamples(b, "vigil_host_disk_flush_requests_total"), 0u);
}

TEST(ProcDiskstatsCollectorTest, ParsesThe18FieldFormat) {
  auto devs = ProcDiskstatsCollector::Parse(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n");

  ASSERT_TRUE(devs.ok()) << devs.status().message();
  ASSERT_EQ(devs->size(), 1u);
  EXPECT_EQ((*devs)[0].name, "sda");
  EXPECT_EQ((*devs)[0].fields, 15);
  EXPECT_EQ((*devs)[0].v[13], 14u);
}

TEST(ProcDiskstatsCollectorTest, EmptyExcludeKeepsLoopDevices) {
  ProcDiskstatsCollector collector(FixturePaths("cgroupv2_numa_ib_host"),
                                   ProcDiskstatsOptions{.device_exclude = ""});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(FindValue(r.batch, "vigil_host_disk_reads_completed_total", {{"device", "loop0"}}),
            120);
}

TEST(ProcDiskstatsCollectorTest, CustomExcludeSkipsDeviceMapper) {
  ProcDiskstatsCollector collector(FixturePaths("cgroupv2_numa_ib_host"),
                                   ProcDiskstatsOptions{.device_exclude = "^(loop|dm-)"});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_disk_reads_completed_total"), 2u);
}

TEST(ProcDiskstatsCollectorTest, BadExcludeRegexIsInvalidArgument) {
  ProcDiskstatsCollector collector(FixturePaths("debian12_vm"),
                                   ProcDiskstatsOptions{.device_exclude = "(unclosed"});

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(r.batch.samples.empty());
}

TEST(ProcDiskstatsCollectorTest, WithoutSysBlockEveryDeviceIsKept) {
  ScratchTree tree;
  tree.Write("proc/diskstats", " 8 0 sda 1 0 2 0 0 0 0 0 0 0 0\n 8 1 sda1 1 0 2 0 0 0 0 0 0 0 0\n");
  ProcDiskstatsCollector collector(tree.paths());
  std::filesystem::remove_all(tree.paths().sys_root);

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_disk_reads_completed_total"), 2u);
}

// The choice of devices is kept between ticks and made again when the device list changes: a
// hot-plugged disk shows on the next tick, its new partition does not.
TEST(ProcDiskstatsCollectorTest, AHotPluggedDiskShowsOnTheNextTick) {
  ScratchTree tree;
  tree.MakeDir("sys/block/sda");
  tree.Write("proc/diskstats", " 8 0 sda 1 0 2 0 0 0 0 0 0 0 0\n");
  ProcDiskstatsCollector collector(tree.paths());
  ASSERT_EQ(CountSamples(CollectOnce(collector).batch, "vigil_host_disk_reads_completed_total"),
            1u);

  tree.MakeDir("sys/block/sdb");
  tree.Write("proc/diskstats",
             " 8 0 sda 1 0 2 0 0 0 0 0 0 0 0\n 8 16 sdb 7 0 2 0 0 0 0 0 0 0 0\n"
             " 8 17 sdb1 5 0 2 0 0 0 0 0 0 0 0\n");
  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_disk_reads_completed_total"), 2u);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_disk_reads_completed_total", {{"device", "sdb"}}), 7);
}

TEST(ProcDiskstatsCollectorTest, TruncatedLineIsDataLoss) {
  auto devs = ProcDiskstatsCollector::Parse(" 8 0 sda 1 2 3 4 5\n");

  EXPECT_EQ(devs.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(devs.status().message().find("truncated"), std::string::npos);
  EXPECT_EQ(ProcDiskstatsCollector::Parse(" 8 0\n").status().code(), StatusCode::kDataLoss);
}

TEST(ProcDiskstatsCollectorTest, GarbageNumberIsDataLossWithThePath) {
  ScratchTree tree;
  tree.Write("proc/diskstats", " 8 0 sda 1 2 3 4 5 6 7 8 9 1O 11\n");
  tree.MakeDir("sys/block/sda");
  ProcDiskstatsCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("proc/diskstats"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("'1O'"), std::string::npos) << r.status.message();
}

TEST(ProcDiskstatsCollectorTest, MissingFileIsAbsent) {
  ScratchTree tree;
  ProcDiskstatsCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
