// SPDX-License-Identifier: Apache-2.0
#include "profile/proc_maps.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr std::string_view kMaps =
    "55d0c0a00000-55d0c0a21000 r--p 00000000 fd:01 1311  /usr/bin/python3.11\n"
    "55d0c0a21000-55d0c0c00000 r-xp 00021000 fd:01 1311  /usr/bin/python3.11\n"
    "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
    "7f1000000000-7f1000100000 r-xp 00010000 00:2f 77   /opt/cuda lib/libcudart.so.12.4.127\n"
    "7f2000000000-7f2000001000 r-xp 00000000 fd:01 99   /usr/lib/libold.so (deleted)\n"
    "this line is not a mapping\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0    [stack]\n";

TEST(ProcMapsTest, ParsesEveryFieldAndSkipsJunk) {
  auto maps = ParseProcMaps(kMaps);
  ASSERT_EQ(maps.size(), 6u);
  EXPECT_EQ(maps[1].start, 0x55d0c0a21000u);
  EXPECT_EQ(maps[1].end, 0x55d0c0c00000u);
  EXPECT_EQ(maps[1].file_offset, 0x21000u);
  EXPECT_TRUE(maps[1].executable);
  EXPECT_FALSE(maps[1].writable);
  EXPECT_EQ(maps[1].device, "fd:01");
  EXPECT_EQ(maps[1].inode, 1311u);
  EXPECT_EQ(maps[1].path, "/usr/bin/python3.11");
  EXPECT_FALSE(maps[2].IsFile());
  EXPECT_EQ(maps[3].path, "/opt/cuda lib/libcudart.so.12.4.127");
  EXPECT_EQ(maps[5].path, "[stack]");
  EXPECT_FALSE(maps[5].IsFile());
  EXPECT_EQ(maps[1].FileOffsetOf(0x55d0c0a21010), 0x21010u);
}

TEST(ProcMapsTest, FindsTheMappingHoldingAnAddress) {
  auto maps = ParseProcMaps(kMaps);
  ASSERT_NE(FindMapping(maps, 0x7f1000000010), nullptr);
  EXPECT_EQ(FindMapping(maps, 0x7f1000000010)->inode, 77u);
  EXPECT_EQ(FindMapping(maps, 0x7f1000100000), nullptr);  // One past the end.
  EXPECT_EQ(FindMapping(maps, 0x1000), nullptr);
}

TEST(ProcMapsTest, FindsLibrariesByBasenamePrefix) {
  auto maps = ParseProcMaps(kMaps);
  auto cudart = FindMappedLibrary(maps, "libcudart.so");
  ASSERT_TRUE(cudart.has_value());
  EXPECT_EQ(cudart->inode, 77u);
  EXPECT_TRUE(FindMappedLibrary(maps, "libold.so").has_value());
  EXPECT_FALSE(FindMappedLibrary(maps, "libcuda.so.1").has_value());
}

TEST(ProcMapsTest, PathsGoThroughTheProcessRoot) {
  EXPECT_EQ(MappedFilePath(42, "/usr/lib/x.so"), "/proc/42/root/usr/lib/x.so");
  EXPECT_EQ(MappedFilePath(42, "/usr/lib/x.so", "/tmp/fake"), "/tmp/fake/42/root/usr/lib/x.so");
}

TEST(ProcMapsTest, ReadsOwnMapsAndExecutable) {
  auto maps = ReadProcMaps(getpid());
  ASSERT_TRUE(maps.ok()) << maps.status().ToString();
  std::string exe = ExecutablePath(getpid());
  ASSERT_FALSE(exe.empty());
  bool found = false;
  for (const Mapping& m : *maps) found |= m.executable && m.path == exe;
  EXPECT_TRUE(found) << exe;
  EXPECT_FALSE(ReadProcMaps(-5).ok());
}

}  // namespace
}  // namespace vigil
