// SPDX-License-Identifier: Apache-2.0
// --hta-compat on the vendored sample traces against Holistic Trace Analysis' own outputs for
// them (tests/data/traces/hta_reference): every value within 0.5 %.
#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/hta_reference.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

class HtaCompatSampleTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HtaCompatSampleTest, MatchesHtaWithinHalfAPercent) {
  std::string name = GetParam();
  auto traces = ReadTraces(testing::SampleTrace(name));
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  AnalysisConfig config;
  config.hta_compat = true;
  Report report = Analyze(*traces, config);
  ASSERT_EQ(report.ranks.size(), 1u);
  auto c = testing::CompareWithHta(report.ranks[0],
                                   testing::SampleTrace("hta_reference/" + name + ".hta.json"));
  ASSERT_TRUE(c.loaded);
  EXPECT_GT(c.compared, 5);
  for (const std::string& m : c.mismatches) ADD_FAILURE() << m;
}

INSTANTIATE_TEST_SUITE_P(Samples, HtaCompatSampleTest,
                         ::testing::Values("nccl_sampled_rank-0.json.gz",
                                           "amd_mi250_minitoy.json.gz",
                                           "hip_graph_sglang_decode.json.gz",
                                           "old_format_inference_rank_1.json.gz",
                                           "h100_bert_small.json.gz", "a100_alexnet_sync.json.gz"));

// Asserted numbers, from the HTA reference for the NCCL sample (sampled_rank-0).
TEST(HtaCompatNumbersTest, NcclSampleTemporalBreakdown) {
  auto traces = ReadTraces(testing::SampleTrace("nccl_sampled_rank-0.json.gz"));
  ASSERT_TRUE(traces.ok());
  AnalysisConfig config;
  config.hta_compat = true;
  Report report = Analyze(*traces, config);
  const RankReport& r = report.ranks[0];
  EXPECT_TRUE(r.view.steps_dropped);  // two ProfilerSteps: HTA keeps only the first
  EXPECT_EQ(r.view.kept_steps, std::vector<int64_t>{551});
  EXPECT_NEAR(r.temporal.kernel_time, 600058, 3000);
  EXPECT_NEAR(r.temporal.idle, 321378, 3000);
  EXPECT_NEAR(r.temporal.compute, 106252, 3000);
  EXPECT_NEAR(r.temporal.non_compute, 172428, 3000);
  EXPECT_NEAR(static_cast<double>(r.launch.n), 602, 3);
  // Default mode keeps both steps and nanoseconds: a longer span than HTA's.
  Report full = Analyze(*traces, AnalysisConfig());
  EXPECT_GT(full.ranks[0].temporal.kernel_time, 600058 * int64_t{1000});
  EXPECT_EQ(full.ranks[0].unit_ns, 1);
}

TEST(HtaCompatNumbersTest, AmdLaunchStatsAreZeroInHtaModeButCountedByDefault) {
  auto traces = ReadTraces(testing::SampleTrace("amd_mi250_minitoy.json.gz"));
  ASSERT_TRUE(traces.ok());
  AnalysisConfig compat;
  compat.hta_compat = true;
  EXPECT_EQ(Analyze(*traces, compat).ranks[0].launch.n, 0u);  // HTA misses hipLaunchKernel
  Report def = Analyze(*traces, AnalysisConfig());
  EXPECT_EQ(def.ranks[0].launch.n, 16u);
  EXPECT_GT(def.ranks[0].launch.by_api.count("hipLaunchKernel"), 0u);
}

}  // namespace
}  // namespace vigil::trace
