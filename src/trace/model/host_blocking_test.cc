// SPDX-License-Identifier: Apache-2.0
// The host-blocking table and its row-level answer on synthetic traces built call by call.
#include "trace/model/host_blocking.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

RankTrace Read(const TraceBuilder& b) {
  TempDir dir;
  auto t = ReadTraceFile(dir.Write("t.json", b.Json()));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (t.ok()) LinkTrace(&*t);
  return t.ok() ? std::move(*t) : RankTrace();
}

uint32_t RowNamed(const RankTrace& t, std::string_view name) {
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    if (t.strings.Get(t.events.name[i]) == name) return i;
  }
  return kNoIndex;
}

// The runtime row with correlation id `corr`.
uint32_t CallOf(const RankTrace& t, int64_t corr) {
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    if (t.events.kind[i] == EventKind::kRuntime && t.events.correlation[i] == corr) return i;
  }
  ADD_FAILURE() << "no call with correlation " << corr;
  return kNoIndex;
}

TEST(HostBlockingTest, TableNamesAreUniqueAndEveryRowSaysWhy) {
  std::set<std::string_view> seen;
  for (const HostBlockingRule& r : HostBlockingTable()) {
    EXPECT_TRUE(seen.insert(r.api).second) << r.api;
    EXPECT_FALSE(r.why.empty()) << r.api;
    EXPECT_EQ(r.blocks == HostBlocking::kNever, r.kind == BlockKind::kNone) << r.api;
    EXPECT_EQ(FindHostBlockingRule(r.api), &r);
  }
}

TEST(HostBlockingTest, NamesFollowTheCudaAndHipDocumentation) {
  EXPECT_EQ(HostBlockingOfName("cudaStreamSynchronize"), HostBlocking::kAlways);
  EXPECT_EQ(HostBlockingOfName("hipDeviceSynchronize"), HostBlocking::kAlways);
  EXPECT_EQ(HostBlockingOfName("cudaMemcpy"), HostBlocking::kAlways);
  EXPECT_EQ(HostBlockingOfName("cudaFree"), HostBlocking::kAlways);
  EXPECT_EQ(HostBlockingOfName("hipMalloc"), HostBlocking::kAlways);
  EXPECT_EQ(HostBlockingOfName("cudaMemcpyAsync"), HostBlocking::kPageable);
  EXPECT_EQ(HostBlockingOfName("hipMemcpyAsync"), HostBlocking::kPageable);
  // Waits on the GPU, polls, stream-ordered allocation, launches and unknown names: never.
  EXPECT_EQ(HostBlockingOfName("cudaStreamWaitEvent"), HostBlocking::kNever);
  EXPECT_EQ(HostBlockingOfName("hipStreamWaitEvent"), HostBlocking::kNever);
  EXPECT_EQ(HostBlockingOfName("cudaStreamQuery"), HostBlocking::kNever);
  EXPECT_EQ(HostBlockingOfName("cudaFreeAsync"), HostBlocking::kNever);
  EXPECT_EQ(HostBlockingOfName("cudaLaunchKernel"), HostBlocking::kNever);
  EXPECT_EQ(HostBlockingOfName("cudaGetDevice"), HostBlocking::kNever);
  EXPECT_FALSE(IsSyncName("cudaStreamWaitEvent"));
  EXPECT_FALSE(IsSyncName("cudaMemcpyAsync"));  // only with pageable memory: a row-level answer
  EXPECT_TRUE(IsSyncName("cudaDeviceSynchronize"));
  EXPECT_TRUE(IsSyncName("hipMemcpyWithStream"));
}

TEST(HostBlockingTest, CuptiVersionAndPerThreadSuffixesAreDropped) {
  EXPECT_EQ(NormalizeApiName("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
  EXPECT_EQ(NormalizeApiName("cuMemcpyDtoH_v2"), "cuMemcpyDtoH");
  EXPECT_EQ(NormalizeApiName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(NormalizeApiName("hipMemcpy_spt"), "hipMemcpy");
  EXPECT_EQ(NormalizeApiName("cudaMemcpy2D"), "cudaMemcpy2D");  // a digit that is no version
  EXPECT_EQ(HostBlockingOfName("cudaStreamSynchronize_v3020"), HostBlocking::kAlways);
}

TEST(HostBlockingTest, AsyncCopiesBlockOnlyWithPageableMemory) {
  TraceBuilder b;
  b.Launch("cudaMemcpyAsync", 0, 50, 1)
      .Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 5, 40, 1);
  b.Launch("cudaMemcpyAsync", 60, 2, 2)
      .Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 70, 4, 2);
  b.Launch("cudaMemsetAsync", 80, 2, 3).Gpu("gpu_memset", "Memset (Device)", 85, 1, 3);
  b.Launch("cudaStreamWaitEvent", 90, 2, 4);
  b.Launch("cudaStreamSynchronize", 100, 20, 5);
  b.Launch("cudaMemcpy", 130, 20, 6).Gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 131, 4, 6);
  b.Launch("hipMemcpy", 160, 20, 7).Gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 161, 4, 7);
  b.Launch("cudaMemcpyAsync", 190, 2, 8);  // its copy was not captured: nothing to say it blocked
  RankTrace t = Read(b);
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 1)), BlockKind::kPageableCopy);
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 2)), BlockKind::kNone);  // pinned
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 3)), BlockKind::kNone);  // memset
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 4)), BlockKind::kNone);  // waits on the GPU only
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 5)), BlockKind::kExplicitSync);
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 6)), BlockKind::kNone);  // CUDA queues device-to-device
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 7)), BlockKind::kBlockingCopy);  // HIP's blocks
  EXPECT_EQ(HostBlockKind(t, CallOf(t, 8)), BlockKind::kNone);
  // GPU rows and CPU ops never block.
  EXPECT_FALSE(BlocksHost(t, RowNamed(t, "Memcpy DtoH (Device -> Pageable)")));
  EXPECT_FALSE(BlocksHost(t, kNoIndex));
}

}  // namespace
}  // namespace vigil::trace
