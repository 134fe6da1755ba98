// SPDX-License-Identifier: Apache-2.0
// Kernel attribution and the CPU operator breakdown on a synthetic trace computed by hand, and
// their sections in the JSON and text reports.
#include "trace/analysis/cpu_op_breakdown.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trace/report/json_report.h"
#include "trace/report/text_report.h"
#include "trace/testing/analysed_ranks.h"

namespace vigil::trace {
namespace {

// Times in microseconds. Thread 1: a module frame around two linear calls and a relu, an
// optimizer annotation, and a graph replayed outside any operator. Thread 2: a recursive mul.
testing::TraceBuilder HandTrace() {
  testing::TraceBuilder b;
  b.Cpu("python_function", "nn.Module: Net_0", 0, 1000)
      .Cpu("cpu_op", "aten::linear", 100, 300)
      .Cpu("cpu_op", "aten::t", 110, 20)
      .Cpu("cpu_op", "aten::addmm", 150, 200)
      .Launch("cudaLaunchKernel", 200, 10, 1)
      .Gpu("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas", 300, 100, 1)
      .Cpu("cpu_op", "aten::relu", 500, 100)
      .Cpu("cpu_op", "aten::clamp_min", 520, 60)
      .Launch("cudaLaunchKernel", 530, 10, 2)
      .Gpu("kernel", "void at::native::vectorized_elementwise_kernel<4, clamp_min>", 600, 50, 2)
      .Cpu("cpu_op", "aten::linear", 700, 200)
      .Cpu("cpu_op", "aten::addmm", 710, 180)
      .Launch("cudaLaunchKernel", 720, 10, 3)
      .Gpu("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas", 900, 200, 3)
      .Cpu("user_annotation", "optimizer", 1200, 300)
      .Cpu("cpu_op", "aten::add_", 1250, 50)
      .Launch("cudaLaunchKernel", 1260, 10, 4)
      .Gpu("kernel", "void at::native::vectorized_elementwise_kernel<4, add>", 1300, 10, 4)
      .Launch("cudaGraphLaunch", 1600, 10, 5)
      .Gpu("kernel", "triton_poi_fused_0", 1700, 20, 5)
      .Gpu("kernel", "void pytorch_flash::flash_fwd_kernel<>", 1720, 30, 5)
      .Cpu("cpu_op", "aten::mul", 0, 300, 2)
      .Cpu("cpu_op", "aten::mul", 50, 50, 2);
  return b;
}

const OpStat& Op(const RankReport& r, std::string_view name) {
  for (const OpStat& s : r.cpu_ops.ops) {
    if (r.trace->strings.Get(s.name) == name) return s;
  }
  ADD_FAILURE() << "no operator " << name;
  static const OpStat kNone;
  return kNone;
}

const ModuleStat& Module(const RankReport& r, std::string_view name) {
  for (const ModuleStat& s : r.cpu_ops.modules) {
    if (r.trace->strings.Get(s.name) == name) return s;
  }
  ADD_FAILURE() << "no module " << name;
  static const ModuleStat kNone;
  return kNone;
}

constexpr int64_t kUs = 1000;

TEST(CpuOpBreakdownTest, HandComputedSelfTotalAndGpuTime) {
  auto a = testing::AnalyseRanks({HandTrace()});
  const RankReport& r = a->rank();
  const CpuOpBreakdown& b = r.cpu_ops;
  struct Want {
    const char* name;
    uint64_t count;
    int64_t total, self, gpu, gpu_inclusive;
  };
  const Want want[] = {
      {"aten::linear", 2, 500, 100, 0, 300},  // self (300-20-200) + (200-180)
      {"aten::t", 1, 20, 20, 0, 0},
      {"aten::addmm", 2, 380, 380, 300, 300},  // launch calls are the operator's own time
      {"aten::relu", 1, 100, 40, 0, 50},
      {"aten::clamp_min", 1, 60, 60, 50, 50},
      {"aten::add_", 1, 50, 50, 10, 10},
      {"aten::mul", 2, 300, 300, 0, 0},  // the nested call is not counted twice in total
  };
  ASSERT_EQ(b.ops.size(), std::size(want));
  for (const Want& w : want) {
    SCOPED_TRACE(w.name);
    const OpStat& s = Op(r, w.name);
    EXPECT_EQ(s.count, w.count);
    EXPECT_EQ(s.total_ns, w.total * kUs);
    EXPECT_EQ(s.self_ns, w.self * kUs);
    EXPECT_EQ(s.gpu_ns, w.gpu * kUs);
    EXPECT_EQ(s.gpu_inclusive_ns, w.gpu_inclusive * kUs);
  }
  EXPECT_EQ(Op(r, "aten::addmm").category, KernelCategory::kGemm);
  EXPECT_EQ(Op(r, "aten::clamp_min").category, KernelCategory::kElementwise);
  EXPECT_EQ(Op(r, "aten::t").category, KernelCategory::kOther);
  // Largest self time first.
  EXPECT_EQ(r.trace->strings.Get(b.ops.front().name), "aten::addmm");
  // Per thread: busy = union of the operators' time = the sum of their self times.
  ASSERT_EQ(b.threads.size(), 2u);
  EXPECT_EQ(b.threads[0].busy_ns + b.threads[1].busy_ns, (650 + 300) * kUs);
  EXPECT_EQ(b.busy_ns, (650 + 300) * kUs);
  EXPECT_EQ(b.operator_events, 10u);
  // Modules: the frame and the annotation; the graph's kernels are in neither.
  ASSERT_EQ(b.modules.size(), 2u);
  const ModuleStat& net = Module(r, "nn.Module: Net_0");
  EXPECT_FALSE(net.annotation);
  EXPECT_EQ(net.total_ns, 1000 * kUs);
  EXPECT_EQ(net.self_ns, 1000 * kUs);
  EXPECT_EQ(net.gpu_ns, 350 * kUs);
  EXPECT_EQ(net.gpu_events, 3u);
  const ModuleStat& opt = Module(r, "optimizer");
  EXPECT_TRUE(opt.annotation);
  EXPECT_EQ(opt.gpu_inclusive_ns, 10 * kUs);
  EXPECT_EQ(b.gpu_ns, 410 * kUs);
  EXPECT_EQ(b.gpu_attributed_ns, 360 * kUs);
  EXPECT_EQ(b.gpu_in_module_ns, 360 * kUs);
  EXPECT_EQ(b.gpu_via_graph_ns, 50 * kUs);
}

TEST(CpuOpBreakdownTest, AttributionAndCategories) {
  auto a = testing::AnalyseRanks({HandTrace()});
  const RankReport& r = a->rank();
  const OpAttribution& at = r.attribution;
  ASSERT_EQ(at.size(), 6u);
  EXPECT_EQ(at.with_op, 4u);
  EXPECT_EQ(at.with_module, 4u);
  EXPECT_EQ(at.graph_events, 2u);
  EXPECT_EQ(at.without_launch, 0u);
  auto cat = [&](KernelCategory c) { return at.by_category[static_cast<size_t>(c)]; };
  EXPECT_EQ(cat(KernelCategory::kGemm).ns, 300 * kUs);
  EXPECT_EQ(cat(KernelCategory::kGemm).count, 2u);
  EXPECT_EQ(cat(KernelCategory::kElementwise).ns, 80 * kUs);
  EXPECT_EQ(cat(KernelCategory::kAttention).ns, 30 * kUs);
  EXPECT_EQ(at.gpu_ns, 410 * kUs);
  // Each kernel's operator is the innermost one around its launch call.
  const RankTrace& t = *r.trace;
  for (size_t i = 0; i < at.size(); ++i) {
    const std::string_view kernel = t.strings.Get(t.events.name[t.links.gpu[i]]);
    const std::string_view op = at.op[i] == kNoIndex ? "" : t.strings.Get(t.events.name[at.op[i]]);
    if (kernel.find("gemm") != std::string_view::npos) {
      EXPECT_EQ(op, "aten::addmm");
    }
    if (kernel.find("clamp_min") != std::string_view::npos) {
      EXPECT_EQ(op, "aten::clamp_min");
    }
    if (at.via_graph[i]) {
      EXPECT_EQ(op, "");
    }
  }
}

TEST(CpuOpBreakdownTest, ReportsCarryTheBreakdown) {
  auto a = testing::AnalyseRanks({HandTrace()});
  auto j = nlohmann::json::parse(RenderJsonReport(a->report));
  const auto& rank = j["ranks"][0];
  ASSERT_TRUE(rank.contains("cpu_ops"));
  ASSERT_TRUE(rank.contains("gpu_categories"));
  EXPECT_DOUBLE_EQ(rank["cpu_ops"]["busy_us"].get<double>(), 950.0);
  EXPECT_EQ(rank["cpu_ops"]["operators"][0]["name"], "aten::addmm");
  EXPECT_DOUBLE_EQ(rank["cpu_ops"]["operators"][0]["self_us"].get<double>(), 380.0);
  EXPECT_DOUBLE_EQ(rank["cpu_ops"]["gpu_via_graph_us"].get<double>(), 50.0);
  double pct = 0;
  for (const auto& c : rank["gpu_categories"]["categories"]) pct += c["pct"].get<double>();
  EXPECT_NEAR(pct, 100.0, 1e-3);  // doubles are written with 6 significant digits
  EXPECT_EQ(rank["gpu_categories"]["categories"][0]["category"], "gemm");
  const std::string text = RenderTextSummary(a->report);
  EXPECT_NE(text.find("GPU time by category: gemm 73.2%"), std::string::npos) << text;
  EXPECT_NE(text.find("CPU operators: 10 calls of 7 operators"), std::string::npos) << text;
  EXPECT_NE(text.find("aten::addmm"), std::string::npos);
  EXPECT_NE(text.find("nn.Module: Net_0"), std::string::npos);
}

// Without any GPU event the operators are still broken down (not only "no GPU work").
TEST(CpuOpBreakdownTest, CpuOnlyTrace) {
  testing::TraceBuilder b;
  b.Cpu("cpu_op", "aten::matmul", 0, 100).Cpu("cpu_op", "aten::mm", 10, 80);
  auto a = testing::AnalyseRanks({b});
  const RankReport& r = a->rank();
  EXPECT_EQ(Op(r, "aten::matmul").self_ns, 20 * kUs);
  EXPECT_EQ(Op(r, "aten::mm").self_ns, 80 * kUs);
  EXPECT_EQ(Op(r, "aten::mm").category, KernelCategory::kGemm);
  const std::string text = RenderTextSummary(a->report);
  EXPECT_NE(text.find("no GPU work"), std::string::npos);
  EXPECT_NE(text.find("CPU operators: 2 calls of 2 operators, 100.00 us busy"), std::string::npos)
      << text;
}

// Partly overlapping operators (coarse timestamps) still partition the thread's time.
TEST(CpuOpBreakdownTest, PartialOverlapKeepsSelfTimesConsistent) {
  testing::TraceBuilder b;
  b.Cpu("cpu_op", "aten::detach", 0, 10).Cpu("cpu_op", "detach", 5, 10);
  auto a = testing::AnalyseRanks({b});
  const RankReport& r = a->rank();
  EXPECT_EQ(Op(r, "aten::detach").self_ns, 5 * kUs);
  EXPECT_EQ(Op(r, "detach").self_ns, 10 * kUs);
  EXPECT_EQ(r.cpu_ops.busy_ns, 15 * kUs);
}

}  // namespace
}  // namespace vigil::trace
