// SPDX-License-Identifier: Apache-2.0
// Each what-if projection on a small synthetic trace whose replay is worked out by hand (times in
// us in the traces, ns in the results).
#include "trace/analysis/what_if.h"

#include <set>

#include <gtest/gtest.h>

#include "trace/analysis/critical_path.h"
#include "trace/analysis/multi_rank_what_if.h"
#include "trace/analysis/path_graph.h"
#include "trace/testing/analysed_ranks.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TraceBuilder;

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)";

uint32_t RowNamed(const RankTrace& t, std::string_view name) {
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    if (t.strings.Get(t.events.name[i]) == name) return i;
  }
  return kNoIndex;
}

// Two streams: attention (stream 7, 10..110) and gemm (stream 8, 10..90); the host waits in
// cudaDeviceSynchronize until 111.
TraceBuilder TwoStreams() {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "attention_fwd", 10, 100, 1, 7);
  b.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", "gemm", 10, 80, 2, 8);
  b.Launch("cudaDeviceSynchronize", 3, 108, 3);
  return b;
}

// One stream: gemm (10..60) then an all-reduce (60..100); the host waits until 101.
TraceBuilder GemmThenAllReduce() {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "gemm", 10, 50, 1);
  b.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", kAllReduce, 60, 40, 2);
  b.Launch("cudaStreamSynchronize", 3, 98, 3);
  return b;
}

TEST(WhatIfTest, ParsesSpecs) {
  auto s = ParseWhatIfSpecs("attention=2x, gemm=1.5X");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].name, "attention");
  EXPECT_DOUBLE_EQ((*s)[0].factor, 2);
  EXPECT_DOUBLE_EQ((*s)[1].factor, 1.5);
  EXPECT_EQ((*s)[1].Label(), "gemm=1.5x");
  for (const char* bad : {"", "attention", "attention=", "=2x", "attention=0x", "a=2y", "a=-1x"}) {
    EXPECT_FALSE(ParseWhatIfSpecs(bad).ok()) << bad;
  }
}

TEST(WhatIfTest, GpuIdleRemovedOnThePath) {
  // The path: launch latency 0..5 (GPU idle), kernel 5..105, return 105..107, 107..118 on the
  // CPU with the GPU idle: 18 us of idle removed, the rest replays to 100 us.
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 2, 1).Gpu("kernel", "gemm", 5, 100, 1);
  b.Launch("cudaDeviceSynchronize", 3, 104, 2);
  b.Cpu("cpu_op", "aten::add", 108, 10);
  auto a = testing::AnalyseRanks({b});
  const WhatIfResult* r = a->rank().what_if.Find("gpu_idle_removed");
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->valid);
  EXPECT_EQ(r->measured_ns, 118'000);
  EXPECT_EQ(r->removable_ns, 18'000);
  EXPECT_EQ(r->projected_ns, 100'000);
  EXPECT_EQ(r->GainNs(), 18'000);
  EXPECT_TRUE(r->moved.empty());
}

TEST(WhatIfTest, FasterKernelMovesThePathToTheOtherStream) {
  // attention=2x: attention ends at 60, so the sync returns 1 us after gemm (90): 91 us, and
  // gemm and its launch moved onto the path. Not a subtraction: halving attention alone would
  // read 61 us.
  auto a = testing::AnalyseRanks({TwoStreams()});
  const RankTrace& t = a->traces[0];
  const PathGraph g = BuildPathGraph(t, KernelClassifier::Default());
  const CriticalPath measured = CriticalPathOf(g);
  EXPECT_EQ(measured.Length(), 111'000);
  const WhatIfResult r = ProjectSpec(g, measured, {"attention", 2});
  EXPECT_EQ(r.name, "attention=2x");
  EXPECT_EQ(r.projected_ns, 91'000);
  EXPECT_EQ(r.removable_ns, 50'000);
  std::set<uint32_t> moved;
  for (const auto& [rank, row] : r.moved) moved.insert(row);
  EXPECT_EQ(moved,
            (std::set<uint32_t>{RowNamed(t, "gemm"), t.links.launcher[RowNamed(t, "gemm")]}));
  // With a category function, "gemm" names the gemm kernel, which is off the path: no gain.
  KernelCategoryFn cat = [](const RankTrace& tr, uint32_t row) -> std::string_view {
    return tr.strings.Get(tr.events.name[row]) == "gemm" ? "GEMM" : "";
  };
  const WhatIfResult off = ProjectSpec(g, measured, {"gemm", 4}, cat);
  EXPECT_EQ(off.projected_ns, 111'000);
  EXPECT_FALSE(off.note.empty());
}

TEST(WhatIfTest, CommOverlappedAndRoofline) {
  auto a = testing::AnalyseRanks({GemmThenAllReduce()});
  const RankTrace& t = a->traces[0];
  const WhatIfResult* comm = a->rank().what_if.Find("comm_overlapped");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->measured_ns, 101'000);
  EXPECT_EQ(comm->projected_ns, 61'000);  // the all-reduce hidden: gemm ends 60, return 61
  EXPECT_EQ(comm->removable_ns, 40'000);
  // gemm at a 20 us roofline: it ends at 30; the all-reduce, queued behind it, starts at 30
  // (its launch at 1 us plus the 10 us launch latency is earlier) and the call returns at 71.
  const PathGraph g = BuildPathGraph(t, KernelClassifier::Default());
  std::vector<int64_t> roofline(t.events.size(), -1);
  roofline[RowNamed(t, "gemm")] = 20'000;
  const WhatIfResult r = ProjectRoofline(g, CriticalPathOf(g), roofline);
  EXPECT_EQ(r.projected_ns, 71'000);
  EXPECT_EQ(r.GainNs(), 30'000);
}

TEST(WhatIfTest, SlowestRankAtTheMedianOnTheJoinedGraph) {
  // Three ranks compute 5, 10 and 40 us and meet in an all-reduce that ends at 60 (10 us after
  // the last arrival at 50). Own work: 3 us of launch calls + compute = 8, 13, 43 us; rank 2 is
  // scaled by 13/43: its gemm takes 12.093 us, ends at 22.093, and every rank ends 10 us later.
  std::vector<TraceBuilder> ranks(3);
  const double compute[3] = {5, 10, 40};
  for (int r = 0; r < 3; ++r) {
    ranks[r].TopLevel(R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(r) +
                      R"(, "world_size": 3})");
    ranks[r].Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "gemm", 10, compute[r], 1);
    ranks[r].Launch("cudaLaunchKernel", 2, 1, 2);
    ranks[r].Gpu("kernel", kAllReduce, 10 + compute[r], 50 - compute[r], 2);
  }
  auto a = testing::AnalyseRanks(ranks);
  const MultiRankCriticalPath& p = a->report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  EXPECT_EQ(p.Length(), 60'000);
  ASSERT_FALSE(p.crossings.empty());
  EXPECT_EQ(p.crossings.back().last_rank_index, 2u);
  const WhatIfResult* slow = nullptr;
  const WhatIfResult* comm = nullptr;
  for (const WhatIfResult& r : p.what_if) {
    if (r.name == "slowest_rank_at_median") slow = &r;
    if (r.name == "comm_overlapped") comm = &r;
  }
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->projected_ns, 32'093);
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->projected_ns, 50'000);  // the transfer hidden; the wait for rank 2 stays
  // The straggler is the last arriver; the others waited 30 us for it alone.
  ASSERT_FALSE(a->report.cross.stragglers.empty());
  EXPECT_EQ(a->report.cross.stragglers[0].rank, 2);
  EXPECT_EQ(a->report.cross.stragglers[0].metric, "arrival");
  EXPECT_EQ(a->report.cross.stragglers[0].late_ns, 30'000);
}

}  // namespace
}  // namespace vigil::trace
