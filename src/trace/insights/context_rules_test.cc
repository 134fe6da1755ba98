// SPDX-License-Identifier: Apache-2.0
// The rules advise by context: the same symptom on training and inference, on Turing and Hopper,
// with and without graphs, gets the advice that applies there.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

// 200 back-to-back 100 us kernels named `kernel` on `device`, with one CPU op `op` around the
// launches (it decides training or inference).
TraceBuilder Busy(std::string_view device, int major, std::string_view kernel,
                  std::string_view op) {
  TraceBuilder b;
  b.TopLevel(fmt::format(
      R"("deviceProperties": [{{"id": 0, "name": "{}", "computeMajor": {}, "computeMinor": 5, "totalGlobalMem": 11000000000}}])",
      device, major));
  b.Cpu("cpu_op", op, 0, 1000);
  for (int i = 0; i < 200; ++i) {
    b.Launch("cudaLaunchKernel", i * 5, 4, i).Gpu("kernel", kernel, 50 + i * 100, 100, i);
  }
  return b;
}

const Insight* Find(const Report& r, std::string_view id) {
  for (const Insight& in : r.insights) {
    if (in.id == id) return &in;
  }
  return nullptr;
}

struct Analysed {
  TempDir dir;
  std::vector<RankTrace> traces;
  Report report;
  explicit Analysed(const TraceBuilder& b) {
    dir.Write("rank0.json", b.Json());
    auto t = ReadTraces(dir.path());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) traces = std::move(*t);
    report = Analyze(traces, AnalysisConfig());
  }
};

TEST(ContextRulesTest, TensorCoreAdviceFollowsTheArchitecture) {
  // SIMT GEMMs on a Turing card (not in the hwspec table: read from the compute capability).
  Analysed turing(Busy("NVIDIA GeForce RTX 2080 Ti", 7, "volta_sgemm_128x64_nn",
                       "autograd::engine::evaluate_function: MmBackward0"));
  const Insight* t = Find(turing.report, "no_tensor_cores");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->recommendation.find("allow_tf32"), std::string::npos) << t->recommendation;
  EXPECT_NE(t->recommendation.find("GradScaler"), std::string::npos) << t->recommendation;
  EXPECT_NE(t->recommendation.find("turing"), std::string::npos) << t->recommendation;
  // The same on an Ampere-class capability: TF32 is advised.
  Analysed ampere(Busy("Some Future GPU", 8, "volta_sgemm_128x64_nn", "aten::mm"));
  const Insight* a = Find(ampere.report, "no_tensor_cores");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->recommendation.find("allow_tf32"), std::string::npos);
  // No tensor cores at all (Pascal): nothing to miss.
  Analysed pascal(Busy("Tesla P100-PCIE-16GB", 6, "maxwell_sgemm_128x64_nn", "aten::mm"));
  EXPECT_EQ(Find(pascal.report, "no_tensor_cores"), nullptr);
}

TEST(ContextRulesTest, CommunicationAdviceFollowsTheWorkload) {
  auto with_comm = [](std::string_view op) {
    TraceBuilder b = Busy("NVIDIA H100 80GB HBM3", 9, "sm90_xmma_gemm_bf16", op);
    b.Launch("cudaLaunchKernel", 1001, 4, 5000)
        .Gpu("kernel", "ncclDevKernel_AllReduce_Sum_bf16", 20100, 10000, 5000, 9);
    return b;
  };
  Analysed training(with_comm("autograd::engine::evaluate_function: MmBackward0"));
  const Insight* t = Find(training.report, "exposed_communication");
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->recommendation.find("DDP"), std::string::npos);
  Analysed inference(with_comm("vllm::unified_attention"));
  EXPECT_EQ(inference.report.ranks[0].workload.kind, WorkloadKind::kInference);
  const Insight* i = Find(inference.report, "exposed_communication");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->recommendation.find("DDP"), std::string::npos) << i->recommendation;
  EXPECT_NE(i->recommendation.find("Tensor-parallel"), std::string::npos);
}

TEST(ContextRulesTest, NoGraphAdviceWhereGraphsAreLaunched) {
  // 300 short kernels each waiting for its launch: launch-bound.
  auto short_kernels = [](bool graphs) {
    TraceBuilder b;
    b.Cpu("cpu_op", "aten::add", 0, 20000);
    for (int i = 0; i < 300; ++i) {
      b.Launch("cudaLaunchKernel", i * 50, 40, i).Gpu("kernel", "elementwise", i * 50 + 45, 3, i);
    }
    if (graphs) {
      b.Launch("cudaGraphLaunch", 16000, 5, 9000).Gpu("kernel", "graph_kernel", 16010, 500, 9000);
    }
    return b;
  };
  Analysed plain(short_kernels(false));
  const Insight* p = Find(plain.report, "launch_bound");
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->recommendation.find("Capture the step in CUDA/HIP graphs"), std::string::npos);
  Analysed graphs(short_kernels(true));
  const Insight* g = Find(graphs.report, "launch_bound");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->recommendation.find("Capture the step in CUDA/HIP graphs"), std::string::npos);
  EXPECT_NE(g->detail.find("already launches 1 graphs"), std::string::npos) << g->detail;
}

}  // namespace
}  // namespace vigil::trace
