// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_stats.h"

#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(CgroupStatsTest, FlatKeyedSkipsJunk) {
  auto m = ParseFlatKeyed("usage_usec 10\nbad\nuser_usec x\nsystem_usec 3\n\n");

  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["usage_usec"], 10u);
  EXPECT_EQ(m["system_usec"], 3u);
}

TEST(CgroupStatsTest, IoStatSumsDevices) {
  IoBytes io = ParseIoStat(
      "259:0 rbytes=1048576 wbytes=2097152 rios=10 wios=20 dbytes=0 dios=0\n"
      "259:1 rbytes=524288 wbytes=7 rios=5 wios=0 dbytes=0 dios=0\n"
      "8:0\n");

  EXPECT_EQ(io.read, 1572864u);
  EXPECT_EQ(io.written, 2097159u);
}

TEST(CgroupStatsTest, BlkioIgnoresTotals) {
  IoBytes io = ParseBlkioServiceBytes(
      "8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 12288\n8:0 Async 0\n8:0 Discard 0\n"
      "8:0 Total 12288\n8:16 Read 1\n8:16 Write 2\nTotal 12291\n");

  EXPECT_EQ(io.read, 4097u);
  EXPECT_EQ(io.written, 8194u);
}

TEST(CgroupStatsTest, CapturedEmptyBlkioIsZero) {
  IoBytes io = ParseBlkioServiceBytes("Total 0\n");

  EXPECT_EQ(io.read, 0u);
  EXPECT_EQ(io.written, 0u);
}

TEST(CgroupStatsTest, UnlimitedMemoryHasNoLimit) {
  EXPECT_EQ(ParseMemoryLimit("max\n"), std::nullopt);
  EXPECT_EQ(ParseMemoryLimit("9223372036854771712\n"), std::nullopt);
  EXPECT_EQ(ParseMemoryLimit("garbage"), std::nullopt);
  EXPECT_EQ(ParseMemoryLimit("17179869184\n"), 17179869184u);
}

}  // namespace
}  // namespace vigil
