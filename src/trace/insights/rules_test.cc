// SPDX-License-Identifier: Apache-2.0
// Every insight rule: a trace that fires it and a healthy trace that must not. The healthy trace
// (busy GPU, tensor-core GEMMs, launches well ahead, no syncs, pinned copies) fires nothing.
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

// A healthy trace: 2 steps of 200 back-to-back 100 us tensor-core GEMMs launched far ahead.
TraceBuilder Healthy(double kernel_us = 100, int rank = 0) {
  TraceBuilder b;
  b.TopLevel("\"distributedInfo\": {\"rank\": " + std::to_string(rank) + "}");
  b.TopLevel(
      R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 80000000000}])");
  b.Cpu("user_annotation", "ProfilerStep#1", 0, 10000);
  b.Cpu("user_annotation", "ProfilerStep#2", 10000, 10000);
  for (int i = 0; i < 400; ++i) {
    b.Launch("cudaLaunchKernel", i * 5, 4, i)
        .Gpu("kernel", "sm90_xmma_gemm_bf16", 50 + i * kernel_us, kernel_us, i);
  }
  b.Memory(10, 1000000000, 2000000000);
  return b;
}

std::vector<std::string> FiredIds(const std::vector<TraceBuilder>& ranks) {
  TempDir dir;
  for (size_t i = 0; i < ranks.size(); ++i)
    dir.Write("rank" + std::to_string(i) + ".json", ranks[i].Json());
  auto traces = ReadTraces(dir.path());
  EXPECT_TRUE(traces.ok()) << traces.status().ToString();
  if (!traces.ok()) return {};
  Report report = Analyze(*traces, AnalysisConfig());
  std::vector<std::string> ids;
  for (const Insight& in : report.insights) {
    ids.push_back(in.id);
    EXPECT_FALSE(in.title.empty());
    EXPECT_FALSE(in.recommendation.empty());
    EXPECT_FALSE(in.evidence.empty()) << in.id;
  }
  return ids;
}

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(InsightRulesTest, HealthyTraceFiresNothing) {
  EXPECT_TRUE(FiredIds({Healthy()}).empty());
  EXPECT_TRUE(FiredIds({Healthy(100, 0), Healthy(100, 1)}).empty());
}

TEST(InsightRulesTest, DataloaderBottleneck) {
  TraceBuilder b = Healthy();
  b.Cpu("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 10,
        4000);
  EXPECT_TRUE(Has(FiredIds({b}), "dataloader_bottleneck"));
  TraceBuilder ok = Healthy();
  ok.Cpu("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 10,
         100);
  EXPECT_FALSE(Has(FiredIds({ok}), "dataloader_bottleneck"));
}

TEST(InsightRulesTest, LowGpuUtilization) {
  TraceBuilder b;
  for (int i = 0; i < 10; ++i)
    b.Launch("cudaLaunchKernel", i * 1000, 4, i)
        .Gpu("kernel", "sm90_xmma_gemm", i * 1000 + 10, 100, i);
  EXPECT_TRUE(Has(FiredIds({b}), "low_gpu_utilization"));
  EXPECT_FALSE(Has(FiredIds({Healthy()}), "low_gpu_utilization"));
}

TEST(InsightRulesTest, NoTensorCores) {
  TraceBuilder b;
  for (int i = 0; i < 50; ++i)
    b.Launch("cudaLaunchKernel", i, 1, i)
        .Gpu("kernel", "ampere_sgemm_128x64_nn", 100 + i * 100, 100, i);
  EXPECT_TRUE(Has(FiredIds({b}), "no_tensor_cores"));
  EXPECT_FALSE(Has(FiredIds({Healthy()}), "no_tensor_cores"));
}

TEST(InsightRulesTest, LaunchBound) {
  TraceBuilder b;  // 200 tiny kernels, each launched 10 us after the previous one finished
  for (int i = 0; i < 200; ++i) {
    b.Launch("cudaLaunchKernel", i * 12, 10, i).Gpu("kernel", "sm90_xmma_tiny", i * 12 + 11, 1, i);
  }
  EXPECT_TRUE(Has(FiredIds({b}), "launch_bound"));
  EXPECT_FALSE(Has(FiredIds({Healthy()}), "launch_bound"));
}

TEST(InsightRulesTest, ExcessiveSync) {
  TraceBuilder b = Healthy();
  for (int i = 0; i < 30; ++i) b.Launch("cudaStreamSynchronize", 2100 + i * 200, 150, 100000 + i);
  EXPECT_TRUE(Has(FiredIds({b}), "excessive_sync"));
  TraceBuilder ok = Healthy();
  ok.Launch("cudaDeviceSynchronize", 19000, 10, 100000);
  EXPECT_FALSE(Has(FiredIds({ok}), "excessive_sync"));
}

TEST(InsightRulesTest, PageableMemcpy) {
  TraceBuilder b = Healthy();
  b.Launch("cudaMemcpyAsync", 2100, 5, 100000)
      .Gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 40100, 500, 100000, 7,
           R"("bytes": 8000000)");
  EXPECT_TRUE(Has(FiredIds({b}), "pageable_memcpy"));
  TraceBuilder ok = Healthy();
  ok.Launch("cudaMemcpyAsync", 2100, 5, 100000)
      .Gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 40100, 500, 100000, 7,
           R"("bytes": 8000000)");
  EXPECT_FALSE(Has(FiredIds({ok}), "pageable_memcpy"));
}

TEST(InsightRulesTest, ExposedCommunication) {
  TraceBuilder b = Healthy();
  b.Launch("cudaLaunchKernel", 2100, 4, 100000)
      .Gpu("kernel", "ncclDevKernel_AllReduce_Sum_bf16", 40100, 10000, 100000, 9);
  EXPECT_TRUE(Has(FiredIds({b}), "exposed_communication"));
  TraceBuilder ok = Healthy();  // the same collective hidden under computation
  ok.Launch("cudaLaunchKernel", 2100, 4, 100000)
      .Gpu("kernel", "ncclDevKernel_AllReduce_Sum_bf16", 1000, 10000, 100000, 9);
  EXPECT_FALSE(Has(FiredIds({ok}), "exposed_communication"));
}

TEST(InsightRulesTest, Straggler) {
  EXPECT_TRUE(Has(FiredIds({Healthy(100, 0), Healthy(100, 1), Healthy(140, 2)}), "straggler"));
  EXPECT_FALSE(Has(FiredIds({Healthy(100, 0), Healthy(102, 1), Healthy(101, 2)}), "straggler"));
}

TEST(InsightRulesTest, MemoryNearCapacity) {
  TraceBuilder b = Healthy();
  b.Memory(20, 76000000000, 78000000000);
  EXPECT_TRUE(Has(FiredIds({b}), "memory_near_capacity"));
  EXPECT_FALSE(Has(FiredIds({Healthy()}), "memory_near_capacity"));
}

TEST(InsightRulesTest, UnfusedOptimizer) {
  auto with_optimizer = [](const char* kernel) {
    TraceBuilder b = Healthy();
    b.Cpu("user_annotation", "Optimizer.step#AdamW.step", 2100, 5000);
    for (int i = 0; i < 300; ++i) {
      b.Launch("cudaLaunchKernel", 2101 + i * 10, 5, 200000 + i)
          .Gpu("kernel", kernel, 40100 + i * 2, 1, 200000 + i);
    }
    return b;
  };
  EXPECT_TRUE(Has(FiredIds({with_optimizer("vectorized_elementwise_kernel<AddFunctor>")}),
                  "unfused_optimizer"));
  EXPECT_FALSE(Has(FiredIds({with_optimizer("multi_tensor_apply_kernel<AdamFunctor>")}),
                   "unfused_optimizer"));
}

TEST(InsightRulesTest, ThresholdsAreConfigurable) {
  TraceBuilder b = Healthy();
  b.Cpu("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 10,
        1500);
  EXPECT_FALSE(Has(FiredIds({b}), "dataloader_bottleneck"));  // 7.5% < 10%
  TempDir dir;
  auto traces = ReadTraces(dir.Write("t.json", b.Json()));
  ASSERT_TRUE(traces.ok());
  InsightThresholds th;
  ASSERT_TRUE(th.Set("dataloader_idle_pct", 5).ok());
  Report report = Analyze(*traces, AnalysisConfig(), th);
  ASSERT_FALSE(report.insights.empty());
  EXPECT_EQ(report.insights[0].id, "dataloader_bottleneck");
}

TEST(InsightRulesTest, UnknownThresholdIsRefused) {
  InsightThresholds th;
  EXPECT_FALSE(th.Set("no_such_threshold", 1).ok());
  EXPECT_DOUBLE_EQ(th.Get("straggler_pct"), 10);
}

// The rules' descriptors are the one source of their thresholds: each rule and each threshold,
// with its default, appears in the documented table, and no two rules declare the same name.
TEST(InsightRulesTest, DescriptorsMatchTheDocumentedTable) {
  std::ifstream in(std::string(VIGIL_TEST_DATA_DIR) + "/../../docs/trace-json-schema.md");
  ASSERT_TRUE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  const size_t section = all.find("### Insight rules and thresholds");
  ASSERT_NE(section, std::string::npos);
  const std::string doc = all.substr(section);
  std::set<std::string_view> names;
  for (const InsightRuleSpec* rule : AllInsightRules()) {
    SCOPED_TRACE(std::string(rule->id));
    size_t row = doc.find("| `" + std::string(rule->id) + "` |");
    ASSERT_NE(row, std::string::npos) << "rule missing from the table";
    std::string line = doc.substr(row, doc.find('\n', row) - row);
    for (const ThresholdSpec& t : rule->thresholds) {
      EXPECT_TRUE(names.insert(t.name).second) << t.name << " declared twice";
      std::ostringstream want;
      want << "`" << t.name << "` (" << std::setprecision(12) << t.default_value << ")";
      EXPECT_NE(line.find(want.str()), std::string::npos) << want.str() << " not in: " << line;
    }
  }
}

}  // namespace
}  // namespace vigil::trace
