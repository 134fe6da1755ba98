// SPDX-License-Identifier: Apache-2.0
// The dependency graph and the critical path on small synthetic traces whose longest path is
// worked out by hand in each test (times in us in the traces, ns in the results).
#include "trace/analysis/path_graph.h"

#include <gtest/gtest.h>

#include "trace/analysis/critical_path.h"
#include "trace/analysis/what_if.h"
#include "trace/testing/analysed_ranks.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TraceBuilder;

int64_t PartsSum(const CriticalPath& p) {
  return p.gpu_compute + p.gpu_comm + p.gpu_memory + p.cpu + p.sync + p.gaps;
}

TEST(PathGraphTest, ReplayWithMeasuredWeightsReproducesTheTrace) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 2, 1).Gpu("kernel", "gemm", 5, 100, 1);
  b.Launch("cudaDeviceSynchronize", 3, 104, 2);
  b.Cpu("cpu_op", "aten::add", 108, 10);
  auto a = testing::AnalyseRanks({b});
  const PathGraph g = BuildPathGraph(a->traces[0], KernelClassifier::Default());
  EXPECT_EQ(g.events(), 4u);
  EXPECT_EQ(g.dropped_edges, 0u);
  EXPECT_EQ(ReplayPathGraph(g, MeasuredWeights(g), g.slack), g.time);
}

TEST(PathGraphTest, SyncWaitIsAnEdgeFromTheGpuWorkNotCpuTime) {
  // The host launches a 100 us kernel and waits for it in cudaDeviceSynchronize (3..107): the
  // path runs launch (0) -> kernel (5..105) -> the call's return (107) -> aten::add (108..118).
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 2, 1).Gpu("kernel", "gemm", 5, 100, 1);
  b.Launch("cudaDeviceSynchronize", 3, 104, 2);
  b.Cpu("cpu_op", "aten::add", 108, 10);
  auto a = testing::AnalyseRanks({b});
  const CriticalPath& p = a->rank().critical_path;
  EXPECT_EQ(p.start, 0);
  EXPECT_EQ(p.Length(), 118'000);
  EXPECT_EQ(p.gpu_compute, 100'000);
  EXPECT_EQ(p.gaps, 5'000);  // launch latency 0 -> 5
  EXPECT_EQ(p.sync, 2'000);  // the return after the kernel ended
  EXPECT_EQ(p.cpu, 11'000);  // 107 -> 108 and aten::add
  EXPECT_EQ(PartsSum(p), p.Length());
  EXPECT_EQ(p.BoundBy(), "gpu_compute");
  EXPECT_EQ(p.rows.size(), 4u);  // launch, kernel, sync call, aten::add
  EXPECT_EQ(p.sync_edges, 1u);
}

TEST(PathGraphTest, GraphLaunchFansOutToEveryKernel) {
  // One cudaGraphLaunch (0..3) runs three 10 us kernels back to back (4, 15, 26); the host waits
  // in cudaStreamSynchronize (4..37). Path: 4 us launch latency, three kernels with the 1 us gaps
  // between them, 1 us to return: 37 us over 5 events.
  TraceBuilder b;
  b.Launch("cudaGraphLaunch", 0, 3, 5);
  b.Gpu("kernel", "k1", 4, 10, 5).Gpu("kernel", "k2", 15, 10, 5).Gpu("kernel", "k3", 26, 10, 5);
  b.Launch("cudaStreamSynchronize", 4, 33, 6);
  auto a = testing::AnalyseRanks({b});
  const CriticalPath& p = a->rank().critical_path;
  EXPECT_EQ(p.Length(), 37'000);
  EXPECT_EQ(p.gpu_compute, 30'000);
  EXPECT_EQ(p.gaps, 6'000);
  EXPECT_EQ(p.sync, 1'000);
  EXPECT_EQ(p.rows.size(), 5u);
  EXPECT_EQ(PartsSum(p), p.Length());
}

TEST(PathGraphTest, CrossStreamEventWaitTiesTheStreams) {
  // Kernel B (stream 8, 61..71) waits through cudaStreamWaitEvent for kernel A (stream 7,
  // 10..60), as Kineto's cuda_sync "Stream Wait Event" row says: the path runs A -> B.
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 2, 1).Gpu("kernel", "A", 10, 50, 1, 7);
  b.Launch("cudaEventRecord", 3, 1, 2);
  b.Launch("cudaStreamWaitEvent", 5, 1, 3);
  b.Launch("cudaLaunchKernel", 7, 2, 4).Gpu("kernel", "B", 61, 10, 4, 8);
  b.Cpu("cuda_sync", "Stream Wait Event", 5, 0, 1,
        R"("correlation": 3, "stream": 8, "device": 0, "wait_on_stream": 7,)"
        R"( "wait_on_cuda_event_record_corr_id": 2)");
  auto a = testing::AnalyseRanks({b});
  const CriticalPath& p = a->rank().critical_path;
  EXPECT_EQ(p.event_wait_edges, 1u);
  EXPECT_EQ(p.Length(), 71'000);
  EXPECT_EQ(p.gpu_compute, 60'000);  // A and B
  EXPECT_EQ(p.gaps, 11'000);         // A's launch latency, 1 us between A and B
  EXPECT_EQ(PartsSum(p), p.Length());
  const RankTrace& t = a->traces[0];
  ASSERT_GE(p.rows.size(), 3u);
  EXPECT_EQ(t.strings.Get(t.events.name[p.rows[p.rows.size() - 2]]), "A");
}

TEST(PathGraphTest, PageableDownloadBlocksTheHost) {
  // cudaMemcpyAsync to pageable memory returns only when the copy is done (10..40).
  TraceBuilder b;
  b.Launch("cudaMemcpyAsync", 0, 42, 1)
      .Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 10, 30, 1);
  b.Cpu("cpu_op", "aten::add", 43, 5);
  auto a = testing::AnalyseRanks({b});
  const CriticalPath& p = a->rank().critical_path;
  EXPECT_EQ(p.sync_edges, 1u);
  EXPECT_EQ(p.gpu_memory, 30'000);
  EXPECT_EQ(p.Length(), 48'000);
  EXPECT_EQ(PartsSum(p), p.Length());
}

TEST(PathGraphTest, ReplayedDeviceLengthDropsIdleKeepsStreamOrder) {
  // Stream 7: 10..20 and 50..60; stream 8: 30..35. Without idle: stream 7 takes 20 us.
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "k1", 10, 10, 1, 7);
  b.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", "k2", 50, 10, 2, 7);
  b.Launch("cudaLaunchKernel", 2, 1, 3).Gpu("kernel", "k3", 30, 5, 3, 8);
  auto a = testing::AnalyseRanks({b});
  const PathGraph g = BuildPathGraph(a->traces[0], KernelClassifier::Default());
  EXPECT_EQ(ReplayedDeviceLength(g), 20'000);
  // k1 at 2 us (its roofline, say): 12 us.
  std::vector<int64_t> ns(a->traces[0].events.size(), -1);
  for (uint32_t i = 0; i < ns.size(); ++i) {
    if (a->traces[0].strings.Get(a->traces[0].events.name[i]) == "k1") ns[i] = 2'000;
  }
  EXPECT_EQ(ReplayedDeviceLength(g, &ns), 12'000);
  EXPECT_EQ(a->rank().what_if.replayed_device_ns, 20'000);
}

}  // namespace
}  // namespace vigil::trace
