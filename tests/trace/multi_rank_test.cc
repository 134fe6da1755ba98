// SPDX-License-Identifier: Apache-2.0
// The cross-rank critical path on the real two-rank traces of ../shared/traces (HTA's sampled
// ranks 0 and 1 of a 128-rank NCCL job, one host): collectives pair up, the clocks line up, and
// the path is consistent with the events it runs through. Skips where the traces are absent.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/html_report.h"
#include "trace/report/json_report.h"
#include "trace/report/text_report.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

TEST(MultiRankRealTraceTest, SampledRanksJoinAtTheirCollectives) {
  fs::path dir =
      fs::path(VIGIL_SHARED_DIR) / "traces/HolisticTraceAnalysis/tests/data/trace_filter";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << ": the shared trace set is absent";
  auto traces = ReadTraces(dir.string());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  ASSERT_EQ(traces->size(), 2u);
  Report report = Analyze(*traces, AnalysisConfig());
  const MultiRankCriticalPath& p = report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  const CollectiveMatches& m = p.matches;
  // No collective arguments in these traces: 10 NCCL kernels per rank on streams 84 and 203.
  EXPECT_FALSE(m.recorded_args);
  EXPECT_EQ(m.comm_kernels, 20u);
  // The traces are sampled (kernels dropped at random), so only some pair up; each pair ends
  // together once the clocks are aligned, and both ranks share one host clock.
  ASSERT_GE(m.collectives.size(), 3u);
  ASSERT_TRUE(m.aligned[1]);
  EXPECT_LT(std::llabs(m.offset_ns[1]), 100'000);
  for (const MatchedCollective& c : m.collectives) {
    ASSERT_EQ(c.members.size(), 2u);
    int64_t e0 = (*traces)[0].events.end(c.members[0].row);
    int64_t e1 = (*traces)[1].events.end(c.members[1].row) + m.offset_ns[1];
    EXPECT_LE(std::llabs(e0 - e1), 2 * 100'000) << c.Label();
  }
  // Two common steps: the last may be cut short, so the first is analysed.
  EXPECT_EQ(p.step, 551);
  int64_t sum = 0;
  for (int64_t v : p.by_category) sum += v;
  EXPECT_EQ(sum, p.Length());
  double pct = 0;
  for (const RankPathShare& s : p.ranks) pct += s.pct;
  EXPECT_NEAR(pct, 100.0, 1e-6);
  EXPECT_GT(p.Length(), 0);
  EXPECT_LE(p.Length(), 700'000'000);  // within the ~610 ms step (and its GPU tail)
  int64_t prev_end = p.start;
  for (const PathSegment& s : p.segments) {
    EXPECT_GE(s.start, prev_end) << "segments overlap";
    EXPECT_LE(s.end, p.end);
    prev_end = s.end;
  }
  // At each crossing the path moved to the rank whose kernel started later.
  for (const PathCrossing& x : p.crossings) {
    const MatchedCollective& c = m.collectives[x.collective];
    int64_t arrival[2] = {0, 0};
    for (const CollectiveMember& mem : c.members) {
      arrival[mem.rank_index] =
          (*traces)[mem.rank_index].events.ts[mem.row] + m.offset_ns[mem.rank_index];
    }
    EXPECT_GT(arrival[x.last_rank_index], arrival[x.waiting_rank_index]);
    EXPECT_EQ(x.wait_ns, arrival[x.last_rank_index] - arrival[x.waiting_rank_index]);
  }
  // The outputs carry it.
  nlohmann::json j = nlohmann::json::parse(RenderJsonReport(report), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("multi_rank_critical_path"));
  const nlohmann::json& mj = j["multi_rank_critical_path"];
  EXPECT_TRUE(mj["valid"].get<bool>());
  EXPECT_EQ(mj["ranks"].size(), 2u);
  EXPECT_EQ(mj["clock_alignment"].size(), 2u);
  EXPECT_EQ(mj["collectives"]["matched"].get<uint64_t>(), m.collectives.size());
  std::string text = RenderTextSummary(report);
  size_t at = text.find("Cross-rank critical path");
  ASSERT_NE(at, std::string::npos);
  std::printf("%s", text.substr(at, text.find("\n\n", at) - at + 1).c_str());
  EXPECT_NE(RenderHtmlReport(report).find("Cross-rank critical path"), std::string::npos);
}

std::string ReadGz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// A real trace with Kineto's collective arguments (record_param_comms around each NCCL launch),
// run as two ranks whose clocks differ by 5 s: every collective pairs with its twin by the
// recorded identity, and the offset comes out exactly.
TEST(MultiRankRealTraceTest, RecordedCollectivesJoinAcrossOffsetClocks) {
  fs::path src = fs::path(VIGIL_SHARED_DIR) /
                 "traces/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz";
  if (!fs::exists(src)) GTEST_SKIP() << "no " << src << ": the shared trace set is absent";
  nlohmann::json doc = nlohmann::json::parse(ReadGz(src.string()), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  testing::TempDir dir;
  dir.Write("rank-0.json", doc.dump());
  for (nlohmann::json& ev : doc["traceEvents"]) {
    if (ev.contains("ts") && ev["ts"].is_number()) ev["ts"] = ev["ts"].get<double>() + 5e6;
  }
  doc["distributedInfo"]["rank"] = 1;
  dir.Write("rank-1.json", doc.dump());
  auto traces = ReadTraces(dir.path());
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  ASSERT_EQ(traces->size(), 2u);
  Report report = Analyze(*traces, AnalysisConfig());
  const MultiRankCriticalPath& p = report.multi_path;
  ASSERT_TRUE(p.valid) << p.note;
  const CollectiveMatches& m = p.matches;
  EXPECT_TRUE(m.recorded_args);
  EXPECT_EQ(m.comm_kernels, 42u);  // 21 NCCL kernels a rank
  EXPECT_EQ(m.collectives.size(), 21u);
  EXPECT_EQ(m.unmatched, 0u);
  for (const MatchedCollective& c : m.collectives) {
    ASSERT_EQ(c.members.size(), 2u);
    EXPECT_EQ(c.members[0].row, c.members[1].row) << c.Label();  // each with its twin
    EXPECT_EQ(c.process_group, "pg 0");
  }
  ASSERT_TRUE(m.aligned[1]);
  EXPECT_NEAR(static_cast<double>(m.offset_ns[1]), -5e9, 1e3);
  // Identical ranks arrive together: the path never has to wait for the other one.
  for (const PathCrossing& x : p.crossings) EXPECT_LE(x.wait_ns, 1'000);
  int64_t sum = 0;
  for (int64_t v : p.by_category) sum += v;
  EXPECT_EQ(sum, p.Length());
  EXPECT_EQ(p.step, 4);  // steps 4, 5, 6: the slowest one, the last left out
}

}  // namespace
}  // namespace vigil::trace
