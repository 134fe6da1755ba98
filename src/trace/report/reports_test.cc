// SPDX-License-Identifier: Apache-2.0
// The outputs: JSON schema fields and exact microsecond decimals, HTML self-containment,
// Perfetto overlap lanes, the terminal summary, and the analyze driver end to end.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "trace/analyze_main.h"
#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/html_report.h"
#include "trace/report/json_report.h"
#include "trace/report/perfetto_trace.h"
#include "trace/report/text_report.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(JsonWriterTest, MicrosCarryNanosecondsExactly) {
  JsonWriter w(false);
  w.BeginArray().Micros(1419247332972313).Micros(-1500).Micros(7).EndArray();
  EXPECT_EQ(w.str(), "[1419247332972.313,-1.500,0.007]");
  JsonWriter s(false);
  s.BeginObject().Field("a\"b", "x\ny").EndObject();
  EXPECT_EQ(s.str(), R"({"a\"b":"x\ny"})");
}

TEST(ReportsTest, JsonReportFollowsSchemaOne) {
  auto traces = ReadTraces(testing::SampleTrace("h100_bert_small.json.gz"));
  ASSERT_TRUE(traces.ok());
  Report report = Analyze(*traces, AnalysisConfig());
  auto j = nlohmann::json::parse(RenderJsonReport(report), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], 1);
  ASSERT_EQ(j["ranks"].size(), 1u);
  const auto& r = j["ranks"][0];
  for (const char* k : {"idle_us", "compute_us", "non_compute_us", "kernel_us"}) {
    EXPECT_TRUE(r["temporal_breakdown"].contains(k)) << k;
  }
  for (const char* k : {"host_wait_us", "kernel_wait_us", "other_us"}) {
    EXPECT_TRUE(r["idle_breakdown"].contains(k)) << k;
  }
  EXPECT_TRUE(j["insights"].is_array());
  EXPECT_TRUE(j["data_quality"].contains("truncated_files"));
  // Times keep nanoseconds: the span is the exact ns value / 1000.
  double span = r["temporal_breakdown"]["kernel_us"].get<double>();
  EXPECT_NEAR(span * 1000, static_cast<double>(report.ranks[0].temporal.kernel_time), 0.5);
}

TEST(ReportsTest, HtmlIsSelfContained) {
  auto traces = ReadTraces(testing::SampleTrace("nccl_sampled_rank-0.json.gz"));
  ASSERT_TRUE(traces.ok());
  std::string html = RenderHtmlReport(Analyze(*traces, AnalysisConfig()));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Insights"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

TEST(ReportsTest, PerfettoKeepsOverlappingKernelsOnSeparateLanes) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "a", 10, 100, 1);
  b.Launch("cudaLaunchKernel", 1, 1, 2).Gpu("kernel", "b", 50, 100, 2);  // overlaps a on stream 7
  TempDir dir;
  auto traces = ReadTraces(dir.Write("t.json", b.Json()));
  ASSERT_TRUE(traces.ok());
  Report report = Analyze(*traces, AnalysisConfig());
  EXPECT_EQ((*traces)[0].quality.overlapping_kernels_same_stream, 1u);
  auto j = nlohmann::json::parse(RenderPerfettoTrace(report), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  int64_t tid_a = -1, tid_b = -1;
  int flows = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "a") tid_a = e["tid"];
    if (e["ph"] == "X" && e["name"] == "b") tid_b = e["tid"];
    if (e["ph"] == "s") ++flows;
  }
  EXPECT_NE(tid_a, tid_b);
  EXPECT_GT(flows, 0);  // the critical path
}

TEST(ReportsTest, AnalyzeDriverWritesEveryOutputAndSummary) {
  TempDir dir;
  AnalyzeOptions o;
  o.input = testing::SampleTrace("a100_alexnet_sync.json.gz");
  o.json_path = dir.path() + "/r.json";
  o.html_path = dir.path() + "/r.html";
  o.perfetto_path = dir.path() + "/r.perfetto.json";
  o.progress = 0;
  std::string summary_path = dir.path() + "/summary.txt";
  FILE* out = std::fopen(summary_path.c_str(), "w");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(RunAnalyze(o, out, stderr), 0);
  std::fclose(out);
  std::string summary = Slurp(summary_path);
  EXPECT_NE(summary.find("Rank 0"), std::string::npos);
  EXPECT_NE(summary.find("pageable_memcpy"), std::string::npos);  // 233 MiB of pageable copies
  EXPECT_FALSE(Slurp(o.json_path).empty());
  EXPECT_NE(Slurp(o.html_path).find("</html>"), std::string::npos);
  EXPECT_FALSE(Slurp(o.perfetto_path).empty());
  FILE* null = std::fopen("/dev/null", "w");
  AnalyzeOptions bad = o;
  bad.thresholds = {"no_such_threshold=3"};
  EXPECT_EQ(RunAnalyze(bad, null, null), 2);
  AnalyzeOptions missing;
  missing.input = dir.path() + "/nope.json";
  missing.progress = 0;
  EXPECT_EQ(RunAnalyze(missing, null, null), 1);
  std::fclose(null);
}

TEST(ReportsTest, CpuOnlyTraceHasNoGpuSectionsAndNoAlarms) {
  auto traces = ReadTraces(testing::SampleTrace("cpu_only_rank-34.json.gz"));
  ASSERT_TRUE(traces.ok());
  Report report = Analyze(*traces, AnalysisConfig());
  EXPECT_FALSE(report.ranks[0].temporal.valid);
  EXPECT_TRUE(report.insights.empty());
  EXPECT_NE(RenderTextSummary(report).find("CPU only"), std::string::npos);
}

// Two ranks meeting at an all-reduce that rank 1 reaches late: every output shows the
// cross-rank path, the Perfetto trace draws the jump between the ranks as a flow, and each rank
// carries its queue length and memory bandwidth summaries.
TEST(ReportsTest, TwoRanksShowCrossRankPathQueueLengthAndBandwidth) {
  TempDir dir;
  for (int r = 0; r < 2; ++r) {
    double compute = r == 0 ? 5 : 40;
    TraceBuilder b;
    b.TopLevel(R"("distributedInfo": {"rank": )" + std::to_string(r) + "}");
    b.Launch("cudaLaunchKernel", 0, 1, 1).Gpu("kernel", "gemm", 10, compute, 1);
    b.Launch("cudaLaunchKernel", 2, 1, 2);
    b.Gpu("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 10 + compute, 50 - compute, 2);
    b.Launch("cudaMemcpyAsync", 3, 1, 3);
    b.Gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 60, 2, 3, 7, R"("bytes": 4000)");
    dir.Write("rank-" + std::to_string(r) + ".json", b.Json());
  }
  auto traces = ReadTraces(dir.path());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  Report report = Analyze(*traces, AnalysisConfig());
  ASSERT_TRUE(report.multi_path.valid);
  auto j = nlohmann::json::parse(RenderJsonReport(report), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  const auto& mp = j["multi_rank_critical_path"];
  EXPECT_EQ(mp["bound_by"], "compute");
  EXPECT_EQ(mp["crossings"][0]["last_rank"], 1);
  EXPECT_EQ(mp["crossings"][0]["wait_us"].get<double>(), 35.0);
  EXPECT_EQ(mp["collectives"]["identity"], "kernel_order_per_stream");
  const auto& q = j["ranks"][0]["queue_length"]["streams"][0];
  EXPECT_EQ(q["stream"], 7);
  EXPECT_EQ(q["max"].get<double>(), 3.0);  // three launches before the first kernel starts
  const auto& m = j["ranks"][1]["memory_bandwidth"]["kinds"][0];
  EXPECT_EQ(m["kind"], "Memcpy DtoH");
  EXPECT_EQ(m["max_gbps"].get<double>(), 2.0);  // 4000 bytes in 2 us
  auto pf = nlohmann::json::parse(RenderPerfettoTrace(report), nullptr, false);
  ASSERT_FALSE(pf.is_discarded());
  int starts = 0, finishes = 0;
  for (const auto& e : pf["traceEvents"]) {
    if (e.value("name", "").rfind("cross-rank critical path", 0) != 0) continue;
    starts += e["ph"] == "s";
    finishes += e["ph"] == "f";
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(finishes, 1);
  std::string html = RenderHtmlReport(report);
  EXPECT_NE(html.find("Cross-rank critical path"), std::string::npos);
  EXPECT_NE(html.find("Launch queue length"), std::string::npos);
  std::string text = RenderTextSummary(report);
  EXPECT_NE(text.find("Cross-rank critical path (whole trace): 62.00 us, bound by compute"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("launch queue (stream 7)"), std::string::npos);
}

}  // namespace
}  // namespace vigil::trace
