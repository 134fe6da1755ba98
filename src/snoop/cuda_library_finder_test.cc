// SPDX-License-Identifier: Apache-2.0
#include "snoop/cuda_library_finder.h"

#include <gtest/gtest.h>

namespace vigil::snoop {
namespace {

TEST(CudaLibraryFinder, FindsRuntimeDriverAndAllocatorThroughProcRoot) {
  std::vector<Mapping> maps = ParseProcMaps(
      "7f0000000000-7f0000001000 r-xp 00001000 fd:01 11 /usr/lib/libcudart.so.12.4.99\n"
      "7f0000002000-7f0000003000 r-xp 00001000 fd:01 12 /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
      "7f0000004000-7f0000005000 r-xp 00001000 fd:01 13 /opt/torch/lib/libc10_cuda.so\n"
      "7f0000006000-7f0000007000 r-xp 00001000 fd:01 14 /usr/lib/libc.so.6\n");
  std::vector<CudaLibraryFile> found = FindCudaLibraries(42, maps, "/proc");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].provider, CudaLibrary::kRuntime);
  EXPECT_EQ(found[0].path, "/usr/lib/libcudart.so.12.4.99");
  EXPECT_EQ(found[0].open_path, "/proc/42/root/usr/lib/libcudart.so.12.4.99");
  EXPECT_EQ(found[0].inode, 11u);
  EXPECT_EQ(LibraryKindName(found[0]), "cudart");
  EXPECT_EQ(found[1].provider, CudaLibrary::kDriver);
  EXPECT_EQ(LibraryKindName(found[1]), "cuda");
  EXPECT_EQ(found[2].provider, CudaLibrary::kCachingAllocator);
  EXPECT_EQ(LibraryKindName(found[2]), "c10_cuda");
}

TEST(CudaLibraryFinder, NothingForAProcessWithoutCuda) {
  std::vector<Mapping> maps =
      ParseProcMaps("7f0000006000-7f0000007000 r-xp 00001000 fd:01 14 /usr/lib/libc.so.6\n");
  // pid 0 has no /proc entry, so there is no executable to look into either.
  EXPECT_TRUE(FindCudaLibraries(0, maps, "/nonexistent").empty());
}

}  // namespace
}  // namespace vigil::snoop
