// SPDX-License-Identifier: Apache-2.0
// % of roofline on synthetic traces with a hand-made work model: FLOPs, bytes, roofline times
// and percentages computed by hand from the H100 SXM datasheet (989.4 TFLOP/s dense BF16,
// 3.35 TB/s).
#include "trace/analysis/roofline.h"

#include <memory>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "hwspec/gpu_specs.h"
#include "trace/analysis/roofline_math.h"
#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

constexpr std::string_view kH100 =
    R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}])";

// aten::mm only: 2*M*N*K FLOPs, (M*K + K*N + M*N) BF16 elements read and written.
std::optional<OpWork> HandModel(std::string_view name, const OpInputs& in) {
  if (name != "aten::mm" || in.dims.size() < 2 || in.dims[0].size() != 2) return std::nullopt;
  const double m = in.dims[0][0], k = in.dims[0][1], n = in.dims[1][1];
  return OpWork{"GEMM", 2 * m * n * k, (m * k + k * n + m * n) * 2, ComputeSpec::kMatrixBf16};
}

std::string Mm(int n, std::string_view extra = "") {
  return fmt::format(R"({}"Input Dims": [[{}, {}], [{}, {}]], "Input type": ["c10::BFloat16", )"
                     R"("c10::BFloat16"], "Input Strides": [[{}, 1], [{}, 1]], )"
                     R"("Concrete Inputs": ["", ""])",
                     extra, n, n, n, n, n, n);
}

struct Analysed {
  RankTrace trace;
  GpuView view;
  Roofline roofline;
};

// Heap-held: the view points into the trace.
std::unique_ptr<Analysed> AnalyseWith(const TraceBuilder& b, const OpModelFn& model = HandModel) {
  TempDir dir;
  auto t = ReadTraceFile(dir.Write("rank-0.json", b.Json()));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  auto a = std::make_unique<Analysed>();
  if (!t.ok()) return a;
  a->trace = std::move(*t);
  LinkTrace(&a->trace);
  a->view = BuildGpuView(a->trace, AnalysisConfig{});
  a->roofline = AnalyzeRoofline(a->trace, a->view, model);
  return a;
}

TEST(KernelRooflineTest, HandComputedBothRoofs) {
  // 1024^3 BF16 GEMM: 2.147e9 FLOPs / 989.4e12 = 2170.49 ns; 6 MiB / 3.35e12 = 1878.05 ns.
  KernelRooflineFigures k = KernelRoofline(2147483648.0, 6291456.0, 4000, 989.4e12, 3.35e12);
  EXPECT_NEAR(k.compute_ns, 2170.49, 0.01);
  EXPECT_NEAR(k.memory_ns, 1878.05, 0.01);
  EXPECT_NEAR(k.roofline_ns, 2170.49, 0.01);
  EXPECT_EQ(k.bound, RooflineBound::kCompute);
  EXPECT_NEAR(k.achieved_pct, 54.26, 0.01);
  EXPECT_NEAR(k.arithmetic_intensity, 341.33, 0.01);
  EXPECT_NEAR(k.achieved_flops_per_s, 536.87e12, 0.01e12);
  // 512^3: 268.4e6 FLOPs -> 271.31 ns; 1.5 MiB -> 469.51 ns: memory-bound.
  k = KernelRoofline(268435456.0, 1572864.0, 1000, 989.4e12, 3.35e12);
  EXPECT_NEAR(k.roofline_ns, 469.51, 0.01);
  EXPECT_EQ(k.bound, RooflineBound::kMemory);
  EXPECT_NEAR(k.achieved_pct, 46.95, 0.01);
  EXPECT_EQ(KernelRoofline(10, 0, 1, 1e12, 1e12).arithmetic_intensity, -1);
}

TEST(ComputePeakTest, NamesThePeakActuallyUsed) {
  const GpuSpec* h100 = FindGpuSpec("NVIDIA H100 80GB HBM3");
  const GpuSpec* v100 = FindGpuSpec("Tesla V100-SXM2-16GB");
  ASSERT_NE(h100, nullptr);
  ASSERT_NE(v100, nullptr);
  ComputePeak p = PeakFor(*h100, ComputeSpec::kMatrixBf16);
  EXPECT_EQ(p.name, "matrix_bf16");
  EXPECT_DOUBLE_EQ(p.flops_per_s, 989.4e12);     // not the FP8 rate
  p = PeakFor(*v100, ComputeSpec::kMatrixBf16);  // Volta: no BF16 tensor cores
  EXPECT_EQ(p.name, "vector_fp32");
  EXPECT_DOUBLE_EQ(p.flops_per_s, 15.7e12);
  EXPECT_EQ(PeakFor(*v100, ComputeSpec::kMatrixFp16).name, "matrix_fp16");
  EXPECT_EQ(PeakFor(*h100, ComputeSpec::kUnknown).name, "vector_fp32");
}

// Step 1 holds: aten::linear > aten::mm (1024^3) launching kernels A (3 us) and B (1 us);
// aten::relu (no model) launching C (2 us) after a 6 us gap; aten::mm (512^3) whose kernel D
// (1 us) has no launch call but carries the operator's External id.
TraceBuilder FourKernels() {
  TraceBuilder b;
  b.TopLevel(kH100);
  b.Cpu("user_annotation", "ProfilerStep#1", 0, 50);
  b.Cpu("cpu_op", "aten::linear", 1, 11, 1, Mm(1024));
  b.Cpu("cpu_op", "aten::mm", 2, 9, 1, Mm(1024));
  b.Launch("cudaLaunchKernel", 3, 0.5, 1).Gpu("kernel", "gemm_a", 20, 3, 1);
  b.Launch("cudaLaunchKernel", 4, 0.5, 2).Gpu("kernel", "gemm_b", 23, 1, 2);
  b.Cpu("cpu_op", "aten::relu", 13, 1.5, 1, R"("Input Dims": [[8]], "Input type": ["float"])");
  b.Launch("cudaLaunchKernel", 14, 0.5, 3).Gpu("kernel", "relu", 30, 2, 3);
  b.Cpu("cpu_op", "aten::mm", 15, 2, 1, Mm(512, R"("External id": 77, )"));
  b.Gpu("kernel", "gemm_d", 33, 1, 99, 7, R"("External id": 77)");
  return b;
}

TEST(RooflineTest, HandComputedRankAndStep) {
  auto a = AnalyseWith(FourKernels());
  const Roofline& r = a->roofline;
  ASSERT_TRUE(r.computed);
  EXPECT_EQ(r.gpu_model, "H100 SXM");
  EXPECT_EQ(r.main_peak, "matrix_bf16");
  EXPECT_DOUBLE_EQ(r.main_peak_flops_per_s, 989.4e12);
  const RooflineTotals& t = r.rank;
  EXPECT_EQ(t.kernels, 4u);
  EXPECT_EQ(t.modelled_kernels, 3u);
  EXPECT_EQ(t.kernel_ns, 7000);
  EXPECT_EQ(t.modelled_ns, 5000);
  EXPECT_NEAR(t.Coverage(), 5.0 / 7, 1e-12);
  EXPECT_NEAR(t.flops, 2147483648.0 + 268435456.0, 1);
  EXPECT_NEAR(t.bytes, 6291456.0 + 1572864.0, 1e-3);
  EXPECT_NEAR(t.roofline_ns, 2170.49 + 469.51, 0.02);
  EXPECT_EQ(t.replayed_ns, 7000);  // 4 + 2 + 1 us: the 6 us and 1 us gaps removed
  EXPECT_EQ(t.wall_ns, 14000);     // 20 us .. 34 us
  EXPECT_NEAR(t.PctOfReplayed(), 37.71, 0.01);
  EXPECT_NEAR(t.PctOfWall(), 18.86, 0.01);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].number, 1);
  // A step holds the GPU work launched inside it: D has no launch call, so only A, B and C.
  EXPECT_EQ(r.steps[0].totals.kernels, 3u);
  EXPECT_EQ(r.steps[0].totals.replayed_ns, 6000);
  EXPECT_EQ(r.steps[0].totals.wall_ns, 12000);
  EXPECT_NEAR(r.steps[0].totals.PctOfReplayed(), 36.17, 0.01);  // 2170.49 / 6000
  // One point per operator shape: the nearest modelled operator (aten::mm, not aten::linear)
  // owns A and B, its work shared 3:1 by their time.
  ASSERT_EQ(r.shapes.size(), 2u);
  const RooflineShape& big = r.shapes[0];
  EXPECT_EQ(a->trace.strings.Get(big.name), "aten::mm");
  EXPECT_EQ(big.calls, 1u);
  EXPECT_EQ(big.kernels, 2u);
  EXPECT_EQ(big.kernel_ns, 4000);
  EXPECT_NEAR(big.roofline_ns, 2170.49, 0.01);
  EXPECT_EQ(big.peak, "matrix_bf16");
  EXPECT_EQ(r.shapes[1].kernel_ns, 1000);
  EXPECT_NEAR(r.shapes[1].roofline_ns, 469.51, 0.01);
}

TEST(RooflineTest, NoModelNoPeaksNoFigure) {
  auto a = AnalyseWith(FourKernels(),
                       [](std::string_view, const OpInputs&) { return std::optional<OpWork>(); });
  EXPECT_EQ(a->roofline.rank.modelled_kernels, 0u);
  EXPECT_EQ(a->roofline.rank.Coverage(), 0);
  EXPECT_EQ(a->roofline.rank.PctOfReplayed(), -1);
  TraceBuilder unknown_gpu;
  unknown_gpu.TopLevel(R"("deviceProperties": [{"id": 0, "name": "NVIDIA GeForce RTX 4090"}])");
  unknown_gpu.Cpu("cpu_op", "aten::mm", 0, 5, 1, Mm(64));
  unknown_gpu.Launch("cudaLaunchKernel", 1, 1, 1).Gpu("kernel", "gemm", 10, 2, 1);
  a = AnalyseWith(unknown_gpu);
  EXPECT_EQ(a->roofline.gpu_model, "");
  EXPECT_EQ(a->roofline.rank.Coverage(), 1);
  EXPECT_EQ(a->roofline.rank.PctOfReplayed(), -1);  // no peaks: no figure, not a guess
}

TEST(RooflineTest, ReplayKeepsConcurrencyAndRemovesGaps) {
  TraceBuilder b;
  b.TopLevel(kH100);
  b.Cpu("cpu_op", "aten::mm", 0, 5, 1, Mm(256));
  b.Launch("cudaLaunchKernel", 1, 0.5, 1).Gpu("kernel", "gemm", 100, 10, 1, 7);
  b.Launch("cudaLaunchKernel", 2, 0.5, 2).Gpu("kernel", "other", 105, 7, 2, 8);
  b.Launch("cudaMemcpyAsync", 3, 0.5, 3).Gpu("gpu_memcpy", "Memcpy HtoD", 120, 5, 3, 7);
  auto a = AnalyseWith(b);
  EXPECT_EQ(a->roofline.rank.replayed_ns, 17000);  // [100, 112) and [120, 125)
  EXPECT_EQ(a->roofline.rank.wall_ns, 25000);
  EXPECT_EQ(a->roofline.rank.kernel_ns, 17000);    // the memcpy is on the timeline, not a kernel
  EXPECT_EQ(a->roofline.rank.modelled_ns, 17000);  // both kernels are inside aten::mm
}

}  // namespace
}  // namespace vigil::trace
