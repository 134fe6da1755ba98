// SPDX-License-Identifier: Apache-2.0
// Each analysis on a small synthetic trace whose answer is known by construction.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "trace/analysis/describe.h"
#include "trace/analysis/trace_diff.h"
#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/analysed_ranks.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::Analysed;
using testing::TempDir;
using testing::TraceBuilder;

TEST(DescribeTest, AHistogramDescribesLikeTheValuesItCounts) {
  std::mt19937 rng(11);
  for (size_t n : {1, 2, 3, 7, 100, 1001}) {
    std::vector<double> values;
    std::map<int64_t, uint64_t> counts;
    for (size_t i = 0; i < n; ++i) {
      const int64_t v = static_cast<int64_t>(rng() % 9) - 2;
      values.push_back(static_cast<double>(v));
      ++counts[v];
    }
    const Describe a = DescribeValues(values), b = DescribeCounts(counts);
    EXPECT_EQ(a.count, b.count);
    EXPECT_DOUBLE_EQ(a.mean, b.mean);
    if (n > 1) {
      EXPECT_NEAR(a.std, b.std, 1e-12);
    } else {
      EXPECT_TRUE(std::isnan(b.std));
    }
    EXPECT_EQ(a.min, b.min);
    EXPECT_DOUBLE_EQ(a.p25, b.p25);
    EXPECT_DOUBLE_EQ(a.p50, b.p50);
    EXPECT_DOUBLE_EQ(a.p75, b.p75);
    EXPECT_EQ(a.max, b.max);
  }
  EXPECT_EQ(DescribeCounts({}).count, 0u);
}

TEST(TemporalBreakdownTest, SplitsSpanIntoComputeNonComputeIdleAndExposedComm) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "gemm_a", 0, 10, 1);
  b.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", "ncclDevKernel_AllReduce", 5, 15, 2, 9);
  b.Launch("cudaLaunchKernel", 2, 1, 3).Gpu("kernel", "gemm_b", 30, 10, 3);
  auto a = testing::AnalyseRanks({b});
  const TemporalBreakdown& t = a->rank().temporal;
  ASSERT_TRUE(t.valid);
  EXPECT_EQ(t.kernel_time, 40'000);
  EXPECT_EQ(t.idle, 10'000);
  EXPECT_EQ(t.compute, 20'000);
  EXPECT_EQ(t.non_compute, 10'000);
  EXPECT_EQ(t.comm, 15'000);
  EXPECT_EQ(t.exposed_comm, 10'000);
  EXPECT_NEAR(a->rank().overlap.pct, 100.0 * 5 / 15, 1e-9);
  // Kernel classes with HTA's overlap naming.
  bool found = false;
  for (const KernelTypeTime& k : a->rank().kernels.types) {
    if (k.type == "COMPUTATION overlapping COMMUNICATION") {
      found = true;
      EXPECT_EQ(k.sum, 5'000);
    }
  }
  EXPECT_TRUE(found);
}

TEST(IdleTimeTest, HostWaitKernelWaitAndOtherFollowHtaDefinitions) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "k", 5, 10, 1);     // ends 15
  b.Launch("cudaLaunchKernel", 2, 1, 2).Gpu("kernel", "k", 17, 3, 2);     // gap 2: kernel wait
  b.Launch("cudaLaunchKernel", 90, 1, 3).Gpu("kernel", "k", 100, 10, 3);  // launched late: host
  b.Launch("cudaLaunchKernel", 95, 1, 4).Gpu("kernel", "k", 200, 10, 4);  // gap 90: other
  auto a = testing::AnalyseRanks({b});
  const IdleBreakdown& idle = a->rank().idle;
  ASSERT_EQ(idle.streams.size(), 1u);
  EXPECT_EQ(idle.kernel_wait, 2'000);
  EXPECT_EQ(idle.host_wait, 80'000);
  EXPECT_EQ(idle.other, 90'000);
  EXPECT_EQ(idle.streams[0].host_wait.count, 1u);
}

TEST(LaunchStatsTest, CountsHipAndGraphLaunches) {
  TraceBuilder b;
  b.Launch("hipLaunchKernel", 0, 5, 1).Gpu("kernel", "k1", 10, 2, 1);
  b.Launch("cudaGraphLaunch", 20, 5, 2);
  for (int i = 0; i < 3; ++i) b.Gpu("kernel", "graph_k", 30 + i * 3, 2, 2);
  auto a = testing::AnalyseRanks({b});
  const LaunchStats& s = a->rank().launch;
  EXPECT_EQ(s.n, 2u);  // the HIP launch, and the graph's first kernel
  EXPECT_EQ(s.graph_launches, 1u);
  EXPECT_EQ(s.graph_kernels, 3u);
  EXPECT_EQ(s.short_kernels, 2u);  // both run shorter than their 5 us launch call
  EXPECT_EQ(s.by_api.at("hipLaunchKernel"), 1u);
  EXPECT_NEAR(s.delay_p50, 5'000, 1);  // (10-5) and (30-25) us
}

TEST(MemcpyTest, PageableCopiesAndBandwidth) {
  TraceBuilder b;
  b.Launch("cudaMemcpyAsync", 0, 5, 1)
      .Gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 10, 1000, 1, 7, R"("bytes": 4000000)");
  b.Launch("cudaMemcpyAsync", 0, 5, 2)
      .Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 2000, 100, 2, 7, R"("bytes": 1000000)");
  auto a = testing::AnalyseRanks({b});
  const MemcpyAnalysis& m = a->rank().memcpy;
  EXPECT_EQ(m.pageable_bytes, 4'000'000);
  ASSERT_EQ(m.kinds.size(), 2u);
  EXPECT_EQ(m.kinds[0].kind, "HtoD");
  EXPECT_NEAR(m.kinds[0].GBps(), 4.0, 1e-9);
  ASSERT_EQ(m.pageable_rows.size(), 1u);
}

TEST(SyncPointsTest, NameTheOperatorThatCausedTheSync) {
  TraceBuilder b;
  b.Cpu("cpu_op", "aten::item", 0, 100);
  b.Cpu("cpu_op", "aten::_local_scalar_dense", 1, 98);
  b.Launch("cudaMemcpyAsync", 2, 5, 1)
      .Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 8, 1, 1);
  b.Launch("cudaStreamSynchronize", 10, 80, 2);
  auto a = testing::AnalyseRanks({b});
  const SyncAnalysis& s = a->rank().syncs;
  // The copy to pageable memory blocks too, and both name .item() as their cause.
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.total_ns, 85'000);
  ASSERT_EQ(s.by_cause.count("aten::item"), 1u);
  EXPECT_EQ(s.by_cause.at("aten::item").count, 2u);
  EXPECT_EQ(s.by_kind.at("pageable_copy").dur_ns, 5'000);
  EXPECT_EQ(s.by_kind.at("explicit_sync").dur_ns, 80'000);
  EXPECT_FALSE(SyncCauseHint("aten::item").empty());
}

TEST(SyncPointsTest, WaitsOnTheGpuAndPinnedCopiesAreNotSyncs) {
  TraceBuilder b;
  b.Cpu("cpu_op", "aten::copy_", 0, 100);
  b.Launch("cudaMemcpyAsync", 2, 5, 1).Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 8, 1, 1);
  b.Launch("cudaStreamWaitEvent", 10, 3, 2);
  b.Launch("cudaEventQuery", 20, 1, 3);
  b.Cpu("cpu_op", "aten::empty", 200, 100);
  b.Launch("cudaMalloc", 210, 50, 4);
  auto a = testing::AnalyseRanks({b});
  const SyncAnalysis& s = a->rank().syncs;
  EXPECT_EQ(s.count, 1u);  // only the allocation
  EXPECT_EQ(s.by_api.count("cudaStreamWaitEvent"), 0u);
  EXPECT_EQ(s.by_kind.at("allocation").count, 1u);
  EXPECT_EQ(s.by_cause.count("aten::empty"), 1u);
}

TEST(KernelSequencesTest, RepeatedPairIsAFusionCandidate) {
  TraceBuilder b;
  for (int i = 0; i < 20; ++i) {
    b.Launch("cudaLaunchKernel", i * 10, 1, 2 * i)
        .Gpu("kernel", "mul_kernel", i * 10 + 2, 2, 2 * i);
    b.Launch("cudaLaunchKernel", i * 10 + 1, 1, 2 * i + 1)
        .Gpu("kernel", "add_kernel", i * 10 + 5, 2, 2 * i + 1);
  }
  auto a = testing::AnalyseRanks({b});
  const auto& seqs = a->rank().sequences;
  ASSERT_FALSE(seqs.empty());
  const StringTable& st = a->traces[0].strings;
  EXPECT_EQ(st.Get(seqs[0].names[0]), "mul_kernel");
  EXPECT_EQ(st.Get(seqs[0].names[1]), "add_kernel");
  EXPECT_GE(seqs[0].count, 10u);
}

TEST(UserAnnotationsTest, KernelTimeIsAttributedToTheEnclosingRange) {
  TraceBuilder b;
  b.Cpu("user_annotation", "forward", 0, 100);
  b.Launch("cudaLaunchKernel", 10, 5, 1).Gpu("kernel", "k", 20, 20, 1);
  b.Cpu("user_annotation", "ProfilerStep#3", 0, 200);
  auto a = testing::AnalyseRanks({b});
  const auto& ann = a->rank().annotations;
  ASSERT_EQ(ann.size(), 1u);  // ProfilerStep is a step, not an annotation
  EXPECT_EQ(ann[0].name, "forward");
  EXPECT_EQ(ann[0].kernel_ns, 20'000);
}

TEST(MemoryTimelineTest, PeakAgainstDeviceCapacity) {
  TraceBuilder b;
  b.TopLevel(
      R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 1000}])");
  b.Memory(1, 100, 200).Memory(2, 950, 960).Memory(3, 500, 960);
  auto a = testing::AnalyseRanks({b});
  const auto& mem = a->rank().memory;
  ASSERT_EQ(mem.size(), 1u);
  EXPECT_EQ(mem[0].peak_allocated, 950);
  EXPECT_EQ(mem[0].peak_ts, 2'000);
  EXPECT_NEAR(mem[0].peak_pct, 96.0, 1e-9);
}

TEST(CriticalPathTest, LongKernelsAreGpuBoundLongCpuOpsAreCpuBound) {
  TraceBuilder gpu_bound;
  for (int i = 0; i < 10; ++i) {
    gpu_bound.Launch("cudaLaunchKernel", i * 2, 1, i).Gpu("kernel", "big", 5 + i * 100, 100, i);
  }
  auto g = testing::AnalyseRanks({gpu_bound});
  EXPECT_EQ(g->rank().critical_path.BoundBy(), "gpu_compute");
  TraceBuilder cpu_bound;
  for (int i = 0; i < 10; ++i) {
    cpu_bound.Cpu("cpu_op", "aten::slow_cpu_op", i * 100, 95);
    cpu_bound.Launch("cudaLaunchKernel", i * 100 + 96, 2, i)
        .Gpu("kernel", "tiny", i * 100 + 99, 1, i);
  }
  auto c = testing::AnalyseRanks({cpu_bound});
  EXPECT_EQ(c->rank().critical_path.BoundBy(), "cpu");
  const CriticalPath& cp = c->rank().critical_path;
  EXPECT_EQ(cp.gpu_compute + cp.gpu_comm + cp.gpu_memory + cp.cpu + cp.sync + cp.gaps, cp.Length());
}

TEST(StragglerTest, SlowRankIsFlaggedAndKernelSpreadComputed) {
  std::vector<TraceBuilder> ranks(3);
  for (int r = 0; r < 3; ++r) {
    double dur = r == 2 ? 150 : 100;
    ranks[r].TopLevel("\"distributedInfo\": {\"rank\": " + std::to_string(r) + "}");
    ranks[r].Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "gemm", 2, dur, 1);
  }
  auto a = testing::AnalyseRanks(ranks);
  ASSERT_FALSE(a->report.cross.stragglers.empty());
  EXPECT_EQ(a->report.cross.stragglers[0].rank, 2);
  EXPECT_NEAR(a->report.cross.stragglers[0].excess_pct, 50, 1e-9);
  ASSERT_FALSE(a->report.cross.spread.empty());
  EXPECT_EQ(a->report.cross.spread[0].max_rank, 2);
}

TEST(TraceDiffTest, ReportsTheKernelThatGotSlower) {
  TraceBuilder base, test;
  base.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "attention", 2, 100, 1);
  test.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "attention", 2, 160, 1);
  test.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", "new_kernel", 170, 5, 2);
  auto a = testing::AnalyseRanks({base});
  auto b = testing::AnalyseRanks({test});
  TraceDiff d = DiffReports(a->report, b->report);
  ASSERT_GE(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].name, "attention");
  EXPECT_EQ(d.kernels[0].test_ns - d.kernels[0].base_ns, 60'000);
  EXPECT_EQ(d.kernels[1].base_count, 0u);
  EXPECT_NE(RenderTraceDiff(d).find("[new]"), std::string::npos);
}

TEST(EfficiencyTest, TensorCoresSmEfficiencyAndRoofline) {
  TraceBuilder b;
  b.TopLevel(R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}])");
  b.Cpu("cpu_op", "aten::mm", 0, 10, 1, R"("flops": 1.0e9)");
  b.Launch("cudaLaunchKernel", 1, 1, 1)
      .Gpu("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32", 5, 1000, 1, 7,
           R"("blocks per SM": 0.5, "est. achieved occupancy %": 40)");
  b.Launch("cudaLaunchKernel", 2, 1, 2)
      .Gpu("kernel", "ampere_sgemm_128x64_nn", 1005, 1000, 2, 7,
           R"("blocks per SM": 2.0, "est. achieved occupancy %": 20)");
  auto a = testing::AnalyseRanks({b});
  const Efficiency& e = a->rank().efficiency;
  EXPECT_NEAR(e.TensorCorePct(), 50, 1e-9);
  EXPECT_EQ(e.gemm_no_tc_time, 1'000'000);
  EXPECT_NEAR(e.sm_efficiency_pct, 75, 1e-9);  // (0.5 + 1.0) / 2
  EXPECT_NEAR(e.occupancy_pct, 30, 1e-6);
  EXPECT_NEAR(e.achieved_flops_per_s, 1e9 / 2e-3, 1);
  EXPECT_FALSE(e.gpu_model.empty());
  // A with_flops count over kernel time is not a roofline: without a work model there is none.
  EXPECT_EQ(e.roofline_pct, -1);
}

TEST(KernelClassifierTest, KnowsNcclGenerationsRcclHcclAndCustomRules) {
  KernelClassifier c = KernelClassifier::Default();
  EXPECT_EQ(c.Classify("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", EventKind::kKernel),
            KernelClass::kComm);
  EXPECT_EQ(c.Classify("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096>)",
                       EventKind::kKernel),
            KernelClass::kComm);
  EXPECT_EQ(c.Classify("void vllm::cross_device_reduce_1stage<float, 8>", EventKind::kKernel),
            KernelClass::kComm);
  EXPECT_EQ(c.Classify("hcom_allreduce_", EventKind::kKernel), KernelClass::kComm);
  EXPECT_EQ(c.Classify("Memcpy HtoD (Pinned -> Device)", EventKind::kMemcpy), KernelClass::kMemory);
  EXPECT_EQ(c.Classify("sm80_xmma_gemm", EventKind::kKernel), KernelClass::kCompute);
  ASSERT_TRUE(c.AddRules("# ours\ncomm contains my_allreduce\ncompute iprefix NCCL_FAKE\n").ok());
  EXPECT_EQ(c.Classify("void my_allreduce_kernel", EventKind::kKernel), KernelClass::kComm);
  EXPECT_EQ(c.Classify("nccl_fake_compute", EventKind::kKernel), KernelClass::kCompute);
  EXPECT_FALSE(c.AddRules("comm sometimes x").ok());
  KernelClassifier hta = KernelClassifier::HtaCompat();
  EXPECT_EQ(hta.Classify("ncclDevKernel_AllGather_RING_LL", EventKind::kKernel),
            KernelClass::kComm);
  EXPECT_EQ(hta.Classify("Stream Sync", EventKind::kCudaSync), KernelClass::kOther);
}

}  // namespace
}  // namespace vigil::trace
