// SPDX-License-Identifier: Apache-2.0
#include "collectors/sysfs_reader.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectResult;
using testing::ScratchTree;

TEST(SysfsReaderTest, ReadsTrimmedTextAndNumbers) {
  ScratchTree tree;
  tree.Write("sys/a", "  4: ACTIVE\n");
  tree.Write("sys/n", "-273150\n");
  tree.Write("sys/big", "18446744073709551615\n");
  tree.Write("sys/hex", "0x1003\n");
  SysfsReader reader;
  const std::string root = tree.paths().sys_root;

  EXPECT_EQ(*reader.Read(root + "/a"), "4: ACTIVE");
  EXPECT_EQ(*reader.ReadInt(root + "/n"), -273150);
  EXPECT_EQ(*reader.ReadUint(root + "/big"), 18446744073709551615ull);
  EXPECT_EQ(*reader.ReadNumber(root + "/n"), -273150.0);
  EXPECT_EQ(*reader.ReadNumber(root + "/big"), 18446744073709551615.0);
  EXPECT_EQ(*reader.ReadHex(root + "/hex"), 0x1003);
}

TEST(SysfsReaderTest, MissingIsNotFoundAndGarbageIsDataLossNamingTheFile) {
  ScratchTree tree;
  tree.Write("sys/bad", "12abc\n");
  tree.Write("sys/empty", "");
  tree.Write("sys/badhex", "0xzz\n");
  SysfsReader reader;
  const std::string root = tree.paths().sys_root;

  EXPECT_EQ(reader.Read(root + "/none").status().code(), StatusCode::kNotFound);
  Status bad = reader.ReadNumber(root + "/bad").status();
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.message().find("sys/bad"), std::string::npos) << bad.message();
  EXPECT_EQ(reader.ReadNumber(root + "/empty").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(reader.ReadHex(root + "/badhex").status().code(), StatusCode::kDataLoss);
}

TEST(SysfsReaderTest, AFileThatFillsTheBufferIsDataLoss) {
  ScratchTree tree;
  tree.Write("sys/huge", std::string(SysfsReader::kBufferBytes, '1'));
  SysfsReader reader;

  EXPECT_EQ(reader.Read(tree.paths().sys_root + "/huge").status().code(), StatusCode::kDataLoss);
}

TEST(SysfsReaderTest, RescanIsDueFirstEveryNTicksAndAfterInvalidate) {
  RescanSchedule schedule(3);
  std::vector<bool> due;
  for (int i = 0; i < 7; ++i) {
    due.push_back(schedule.Due());
  }
  EXPECT_EQ(due, (std::vector<bool>{true, false, false, true, false, false, true}));
  schedule.Invalidate();
  EXPECT_TRUE(schedule.Due());
  EXPECT_FALSE(schedule.Due());
  RescanSchedule every_tick(1);
  EXPECT_TRUE(every_tick.Due());
  EXPECT_TRUE(every_tick.Due());
}

TEST(SysfsReaderTest, EmitPlannedSkipsVanishedFilesAndReportsGarbage) {
  ScratchTree tree;
  tree.Write("sys/ok", "2500\n");
  tree.Write("sys/bad", "x\n");
  tree.Write("sys/neg", "-1\n");
  const std::string root = tree.paths().sys_root;
  static constexpr MetricDesc kDesc{"vigil_host_test_volts", "Test.", MetricKind::kGauge, "volts"};
  const std::vector<PlannedValue> plan = {
      {root + "/ok", &kDesc, 1e-3, {{"f", "ok"}}},
      {root + "/gone", &kDesc, 1, {{"f", "gone"}}},
      {root + "/bad", &kDesc, 1, {{"f", "bad"}}},
      {root + "/neg", &kDesc, 1, {{"f", "neg"}}, false, true},
  };
  SysfsReader reader;
  RescanSchedule schedule(100);
  ASSERT_TRUE(schedule.Due());
  CollectResult r;
  MetricWriter out(&r.batch);

  Status s = EmitPlanned(plan, reader, schedule, out);

  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  ASSERT_EQ(r.batch.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(r.batch.samples[0].value, 2.5);
  EXPECT_TRUE(schedule.Due()) << "a vanished file makes the next tick rescan";
}

TEST(SysfsReaderTest, KeptFilesShowNewContentAndRemovalIsNotFound) {
  ScratchTree tree;
  tree.Write("sys/v", "1\n");
  const std::string path = tree.paths().sys_root + "/v";
  SysfsReader reader;

  EXPECT_EQ(*reader.ReadKept(path), "1");
  tree.Write("sys/v", "22\n");  // Rewritten in place, as sysfs regenerates on every read.
  EXPECT_EQ(*reader.ReadKept(path), "22");
  std::filesystem::remove(path);
  EXPECT_EQ(reader.ReadKept(path).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(reader.ReadKept(path).status().code(), StatusCode::kNotFound);
  reader.CloseKept();
}

// On the real sysfs a kept descriptor reads the current value: a datagram sent on loopback
// between two reads shows in lo's transmit counter.
TEST(SysfsReaderTest, KeptSysfsFileIsReadAfresh) {
  const std::string path = "/sys/class/net/lo/statistics/tx_packets";
  SysfsReader reader;
  StatusOr<double> before = reader.ReadNumber(path, /*kept=*/true);
  if (!before.ok()) {
    GTEST_SKIP() << "no loopback statistics here: " << before.status().message();
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // discard; nobody needs to listen for the packet to be sent.
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(sendto(fd, "x", 1, 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 1);
  close(fd);

  StatusOr<double> after = reader.ReadNumber(path, /*kept=*/true);

  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_GT(*after, *before);
}

TEST(SysfsReaderTest, ListsSortedWithPrefixAndNumbers) {
  ScratchTree tree;
  for (const char* d : {"hwmon10", "hwmon2", "other", "hwmonX"}) {
    tree.MakeDir(std::string("sys/") + d);
  }
  Status error;

  EXPECT_EQ(ListSorted(tree.paths().sys_root, "hwmon", &error),
            (std::vector<std::string>{"hwmon10", "hwmon2", "hwmonX"}));
  EXPECT_TRUE(error.ok());
  EXPECT_TRUE(ListSorted(tree.paths().sys_root + "/none", "", &error).empty());
  EXPECT_EQ(error.code(), StatusCode::kNotFound);
  uint64_t n = 0;
  EXPECT_TRUE(NumberAfterPrefix("hwmon10", "hwmon", &n));
  EXPECT_EQ(n, 10u);
  EXPECT_FALSE(NumberAfterPrefix("hwmonX", "hwmon", &n));
  EXPECT_FALSE(NumberAfterPrefix("hwmon", "hwmon", &n));
}

}  // namespace
}  // namespace vigil
