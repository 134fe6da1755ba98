// SPDX-License-Identifier: Apache-2.0
#include "snoop/runtime_code.h"

#include <gtest/gtest.h>

namespace vigil::snoop {
namespace {

Mapping Map(uint64_t start, uint64_t end, bool exec, uint64_t inode, std::string path) {
  Mapping m;
  m.start = start;
  m.end = end;
  m.readable = true;
  m.executable = exec;
  m.inode = inode;
  m.device = "fd:01";
  m.path = std::move(path);
  return m;
}

CudaLibraryFile Library(CudaLibrary provider, uint64_t inode, std::string path) {
  CudaLibraryFile f;
  f.provider = provider;
  f.path = f.open_path = std::move(path);
  f.device = "fd:01";
  f.inode = inode;
  return f;
}

// A shared runtime is each executable mapping of that file (a file mapped twice, as after a
// dlopen of a second name, gives two); its data, the driver and other files are not.
TEST(RuntimeCode, ExecutableMappingsOfTheSharedRuntime) {
  const std::string rt = "/usr/lib/libcudart.so.12.4.127", drv = "/usr/lib/libcuda.so.1";
  std::vector<Mapping> maps = {
      Map(0x1000, 0x2000, true, 9, "/usr/bin/python3"),
      Map(0x7f0000000000, 0x7f0000010000, false, 42, rt),
      Map(0x7f0000010000, 0x7f0000080000, true, 42, rt),
      Map(0x7f0000080000, 0x7f00000a0000, false, 42, rt),
      Map(0x7f1000000000, 0x7f1000400000, true, 43, drv),
      Map(0x7f2000000000, 0x7f2000070000, true, 42, rt),
  };
  std::vector<CudaLibraryFile> files = {Library(CudaLibrary::kRuntime, 42, rt),
                                        Library(CudaLibrary::kDriver, 43, drv)};
  std::vector<CodeRange> got = RuntimeCodeRanges(maps, files);
  std::vector<CodeRange> want = {{0x7f0000010000, 0x7f0000080000},
                                 {0x7f2000000000, 0x7f2000070000}};
  EXPECT_EQ(got, want);
}

TEST(RuntimeCode, NoneWithoutARuntime) {
  std::vector<Mapping> maps = {Map(0x7f1000000000, 0x7f1000400000, true, 43, "/lib/libcuda.so.1")};
  EXPECT_TRUE(
      RuntimeCodeRanges(maps, {Library(CudaLibrary::kDriver, 43, "/lib/libcuda.so.1")}).empty());
  EXPECT_TRUE(RuntimeCodeRanges(maps, {}).empty());
}

// A static runtime whose executable cannot be read (gone, or no symbols) has no span: its
// driver calls are then counted as the program's.
TEST(RuntimeCode, StaticRuntimeInAnUnreadableExecutableHasNone) {
  CudaLibraryFile f = Library(CudaLibrary::kRuntime, 7, "/nonexistent/app");
  f.static_in_executable = true;
  std::vector<Mapping> maps = {Map(0x400000, 0x500000, true, 7, "/nonexistent/app")};
  StaticRuntimeSpans spans;
  EXPECT_TRUE(RuntimeCodeRanges(maps, {f}, &spans).empty());
  ASSERT_EQ(spans.size(), 1u);  // Remembered: the next rescan does not load it again.
  EXPECT_FALSE(spans.begin()->second.has_value());
}

}  // namespace
}  // namespace vigil::snoop
