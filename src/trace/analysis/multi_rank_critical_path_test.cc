// SPDX-License-Identifier: Apache-2.0
// The cross-rank critical path, collective matching and clock alignment on small synthetic 2-3
// rank traces whose answer is known by construction; and the queue length and memory bandwidth
// summaries on traces small enough to work out by hand.
#include <cmath>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/analysed_ranks.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)";

// One rank: a compute kernel of `compute_us`, then an all-reduce that ends at `ar_end`; times
// shifted by `clock` (the rank's clock offset). Launch calls come early, so the GPU never waits
// for the host. With `recorded`, the all-reduce's launch sits inside a record_param_comms op
// carrying Kineto's collective arguments.
TraceBuilder OneAllReduce(int rank, double compute_us, double ar_end, double clock = 0,
                          bool recorded = false) {
  TraceBuilder b;
  b.TopLevel(R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) +
             R"(, "world_size": 2})");
  b.Launch("cudaLaunchKernel", clock + 0, 1, 1).Gpu("kernel", "gemm", clock + 10, compute_us, 1);
  if (recorded) {
    b.Cpu("cpu_op", "record_param_comms", clock + 1.5, 2, 1,
          R"("Collective name": "allreduce", "Process Group Name": "0", "Group size": 2)");
  }
  b.Launch("cudaLaunchKernel", clock + 2, 1, 2);
  b.Gpu("kernel", kAllReduce, clock + 10 + compute_us, ar_end - 10 - compute_us, 2);
  return b;
}

TEST(MultiRankCriticalPathTest, SlowRankArrivingLateAtAllReduceIsOnThePath) {
  // Rank 1 computes for 40 us, rank 0 for 5 us: rank 0 waits in the all-reduce until 50.
  auto a = testing::AnalyseRanks({OneAllReduce(0, 5, 60), OneAllReduce(1, 40, 60)});
  const MultiRankCriticalPath& p = a->report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  EXPECT_FALSE(p.matches.recorded_args);  // no collective arguments: kernel order per stream
  ASSERT_EQ(p.matches.collectives.size(), 1u);
  EXPECT_EQ(p.matches.collectives[0].collective, "AllReduce");
  EXPECT_EQ(p.end - p.start, 60'000);
  // The path runs through rank 1's long gemm, then the all-reduce's transfer (50..60).
  EXPECT_EQ(p.Category(PathCategory::kCompute), 40'000);
  EXPECT_EQ(p.Category(PathCategory::kCommunication), 10'000);
  EXPECT_EQ(p.BoundBy(), "compute");
  bool slow_gemm = false;
  for (const PathSegment& s : p.segments) {
    if (s.rank_index == 1 && s.category == PathCategory::kCompute)
      slow_gemm = s.end - s.start == 40'000;
  }
  EXPECT_TRUE(slow_gemm);
  EXPECT_GT(p.ranks[1].pct, 60.0);
  // If the walk started on rank 0 it crossed to rank 1, which arrived 35 us after rank 0.
  for (const PathCrossing& x : p.crossings) {
    EXPECT_EQ(x.last_rank_index, 1u);
    EXPECT_EQ(x.wait_ns, 35'000);
    EXPECT_EQ(x.late_by_ns, 35'000);
  }
  // Both rank's all-reduce kernels end at 60 on one clock: no offset.
  EXPECT_EQ(p.matches.offset_ns[1], 0);
  EXPECT_TRUE(p.matches.aligned[1]);
}

TEST(MultiRankCriticalPathTest, RankWithOffsetClockStillJoinsAndReportsTheOffset) {
  // Rank 1's clock reads 1 s (1e6 us) later; its slow compute must still be found.
  auto a =
      testing::AnalyseRanks({OneAllReduce(0, 5, 60, 0, true), OneAllReduce(1, 40, 60, 1e6, true)});
  const MultiRankCriticalPath& p = a->report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  EXPECT_TRUE(p.matches.recorded_args);
  ASSERT_EQ(p.matches.collectives.size(), 1u);
  EXPECT_EQ(p.matches.collectives[0].Label(), "allreduce #0 (pg 0)");
  EXPECT_EQ(p.matches.offset_ns[1], -1'000'000'000);
  EXPECT_EQ(p.Length(), 60'000);
  EXPECT_EQ(p.Category(PathCategory::kCompute), 40'000);
  EXPECT_GT(p.ranks[1].pct, 60.0);
}

TEST(MultiRankCriticalPathTest, ThreeRanksPathCrossesToEachLateRankInTurn) {
  // Two all-reduces; rank 2 is slow before the first, rank 1 before the second.
  auto rank = [](int r, double k1, double k2) {
    TraceBuilder b;
    b.TopLevel(R"("distributedInfo": {"rank": )" + std::to_string(r) + R"(, "world_size": 3})");
    b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "gemm1", 10, k1, 1);
    b.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", kAllReduce, 10 + k1, 50 - k1, 2);
    b.Launch("cudaLaunchKernel", 2, 1, 3).Gpu("kernel", "gemm2", 60, k2, 3);
    b.Launch("cudaLaunchKernel", 3, 1, 4).Gpu("kernel", kAllReduce, 60 + k2, 50 - k2, 4);
    return b;
  };
  auto a = testing::AnalyseRanks({rank(0, 5, 5), rank(1, 5, 40), rank(2, 40, 5)});
  const MultiRankCriticalPath& p = a->report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  ASSERT_EQ(p.matches.collectives.size(), 2u);
  for (const MatchedCollective& c : p.matches.collectives) EXPECT_EQ(c.members.size(), 3u);
  // Rank 2's launch (0..1) and launch latency (1..10), its gemm1 (10..50), all-reduce 1's
  // transfer (50..60) on rank 1, rank 1's gemm2 (60..100), all-reduce 2's transfer on rank 0.
  EXPECT_EQ(p.Length(), 110'000);
  EXPECT_EQ(p.Category(PathCategory::kCompute), 80'000);
  EXPECT_EQ(p.Category(PathCategory::kCommunication), 20'000);
  EXPECT_EQ(p.Category(PathCategory::kLaunch), 10'000);
  ASSERT_EQ(p.crossings.size(), 2u);              // starts on rank 0 (first of the ties at 110)
  EXPECT_EQ(p.crossings[0].last_rank_index, 2u);  // in time order: first all-reduce
  EXPECT_EQ(p.crossings[0].waiting_rank_index, 1u);
  EXPECT_EQ(p.crossings[0].late_by_ns, 35'000);
  EXPECT_EQ(p.crossings[1].last_rank_index, 1u);
  EXPECT_EQ(p.crossings[1].waiting_rank_index, 0u);
  EXPECT_EQ(p.crossings[1].wait_ns, 35'000);
  EXPECT_EQ(p.ranks[0].ns, 10'000);
  EXPECT_EQ(p.ranks[1].ns, 50'000);
  EXPECT_EQ(p.ranks[2].ns, 50'000);
  EXPECT_NEAR(p.ranks[0].pct + p.ranks[1].pct + p.ranks[2].pct, 100.0, 1e-9);
}

TEST(MultiRankCriticalPathTest, SingleRankHasNoCrossRankPath) {
  auto a = testing::AnalyseRanks({OneAllReduce(0, 5, 60)});
  EXPECT_FALSE(a->report.multi_path.valid);
}

TEST(CollectiveMatchTest, KernelKindFromNcclAndRcclNames) {
  EXPECT_EQ(KernelCollectiveKind("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"),
            "SendRecv");
  EXPECT_EQ(KernelCollectiveKind("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"), "AllGather");
  EXPECT_EQ(KernelCollectiveKind("void custom_allreduce<float>(float*)"),
            "custom_allreduce<float>");
}

TEST(QueueLengthTest, CountsLaunchedWorkNotYetStartedPerStream) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 0.5, 1).Gpu("kernel", "k", 5, 5, 1);
  b.Launch("cudaLaunchKernel", 1, 0.5, 2).Gpu("kernel", "k", 10, 5, 2);
  b.Launch("cudaLaunchKernel", 2, 0.5, 3).Gpu("kernel", "k", 15, 5, 3);
  auto a = testing::AnalyseRanks({b});
  const QueueLengthSummary& q = a->report.ranks[0].queue_length;
  ASSERT_EQ(q.streams.size(), 1u);
  const StreamQueueLength& s = q.streams[0];
  // Points 1 2 3 (launches) then 2 1 0 (starts).
  EXPECT_EQ(s.stats.count, 6u);
  EXPECT_DOUBLE_EQ(s.stats.mean, 1.5);
  EXPECT_DOUBLE_EQ(s.stats.max, 3);
  EXPECT_DOUBLE_EQ(s.stats.min, 0);
  EXPECT_DOUBLE_EQ(s.stats.p50, 1.5);
  EXPECT_DOUBLE_EQ(s.stats.p25, 1);
  EXPECT_NEAR(s.stats.std, std::sqrt(1.1), 1e-12);
  EXPECT_NEAR(s.time_weighted_mean, 27.0 / 15.0, 1e-12);
  EXPECT_EQ(s.time_at_max, 3'000);
}

TEST(MemoryBandwidthTest, OverlappingCopiesOfOneKindAddUp) {
  TraceBuilder b;
  b.Launch("cudaMemcpyAsync", 0, 0.1, 1);
  b.Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 10, 1, 1, 7, R"("bytes": 1000)");
  b.Launch("cudaMemcpyAsync", 1, 0.1, 2);
  b.Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 10.5, 2, 2, 8, R"("bytes": 4000)");
  b.Launch("cudaMemsetAsync", 2, 0.1, 3);
  b.Gpu("gpu_memset", "Memset (Device)", 20, 1, 3, 7, R"("bytes": 500)");
  auto a = testing::AnalyseRanks({b});
  const MemoryBandwidthSummary& m = a->report.ranks[0].memory_bw;
  ASSERT_EQ(m.kinds.size(), 2u);
  const MemoryKindBandwidth& h = m.kinds[0];
  EXPECT_EQ(h.kind, "Memcpy HtoD");
  EXPECT_EQ(h.ops, 2u);
  // 1 GB/s from 10, 3 GB/s from 10.5, 2 GB/s from 11 until 12.5 (the zero point is left out).
  EXPECT_EQ(h.stats.count, 3u);
  EXPECT_DOUBLE_EQ(h.stats.mean, 2);
  EXPECT_DOUBLE_EQ(h.stats.max, 3);
  EXPECT_DOUBLE_EQ(h.stats.min, 1);
  EXPECT_NEAR(h.time_weighted_mean_gbps, 2.0, 1e-12);
  EXPECT_EQ(m.kinds[1].kind, "Memset");
  EXPECT_DOUBLE_EQ(m.kinds[1].stats.max, 0.5);
  EXPECT_FALSE(m.recorded_bandwidth);
}

}  // namespace
}  // namespace vigil::trace
