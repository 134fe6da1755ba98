// SPDX-License-Identifier: Apache-2.0
// The HTML page's GPU timeline (lanes, idle gaps on the union of a device's streams, merging of
// sub-unit kernels), the insight cards grouped by cause on the 8-rank DLRM trace, and the
// precision of evidence times and the count of left-out insights in the text summary.
#include "trace/report/html_report.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/html_sections.h"
#include "trace/report/text_report.h"
#include "trace/testing/analysed_ranks.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;
using testing::AnalyseRanks;
using testing::TraceBuilder;

size_t Count(const std::string& s, std::string_view needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

std::string Timeline(const RankReport& r) {
  std::string h;
  HtmlGpuTimeline(r, &h);
  return h;
}

TEST(HtmlTimelineTest, DrawsLanesAndIdleGapsOnTheUnionOfStreams) {
  // Stream 7 runs [10, 20] and [50, 60] us, stream 8 [15, 30]: the device is idle on every
  // stream only in [30, 50], although stream 7 alone waits [20, 50].
  TraceBuilder b;
  b.Cpu("user_annotation", "ProfilerStep#3", 0, 70)
      .Launch("cudaLaunchKernel", 1, 2, 1)
      .Launch("cudaLaunchKernel", 4, 2, 2)
      .Launch("cudaLaunchKernel", 40, 2, 3)
      .Gpu("kernel", "gemm_a", 10, 10, 1, 7)
      .Gpu("kernel", "nccl_b", 15, 15, 2, 8)
      .Gpu("kernel", "gemm_c", 50, 10, 3, 7);
  auto a = AnalyseRanks({b});
  std::string h = Timeline(a->rank());
  for (const char* lane :
       {">steps<", ">critical path<", ">GPU 0 idle<", ">GPU 0 stream 7<", ">GPU 0 stream 8<"}) {
    EXPECT_NE(h.find(lane), std::string::npos) << lane;
  }
  EXPECT_NE(h.find("<title>idle on every stream: 20.00 us at 30.000 us</title>"), std::string::npos)
      << h;
  EXPECT_EQ(Count(h, "idle on every stream:"), 1u);
  EXPECT_NE(h.find("<title>gemm_a: 10.00 us at 10.000 us</title>"), std::string::npos);
  EXPECT_NE(h.find(R"(viewBox="0 0 1500 )"), std::string::npos);
  EXPECT_EQ(h.find("Merged"), std::string::npos);  // nothing was small enough to merge
  // The page carries the zoom script once and stays self-contained.
  std::string page = RenderHtmlReport(a->report);
  EXPECT_EQ(Count(page, "<script>"), 1u);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_NE(page.find("setAttribute('viewBox'"), std::string::npos);
}

TEST(HtmlTimelineTest, MergesSubUnitKernelsPerLaneAndSaysSo) {
  // 8000 kernels of 1 us every 5 us, then one at 100 ms: each is 1/100000 of the span, far below
  // one drawing unit, so the lane draws a bounded number of merged rectangles.
  TraceBuilder b;
  constexpr int kKernels = 8000;
  for (int i = 0; i < kKernels; ++i) {
    b.Launch("cudaLaunchKernel", 5.0 * i, 1, i + 1).Gpu("kernel", "tiny", 5.0 * i + 2, 1, i + 1);
  }
  b.Launch("cudaLaunchKernel", 99000, 1, kKernels + 1)
      .Gpu("kernel", "long", 100000, 1000, kKernels + 1);
  auto a = AnalyseRanks({b});
  std::string h = Timeline(a->rank());
  EXPECT_NE(h.find("<title>8000 merged kernels: 8.00 ms in "), std::string::npos);
  EXPECT_NE(h.find(" Merged "), std::string::npos) << h.substr(h.size() - 600);
  EXPECT_LT(Count(h, "<rect"), 3000u);
  EXPECT_LT(h.size(), 600'000u);
  EXPECT_NE(h.find("<title>long: 1.00 ms at 100000.000 us</title>"), std::string::npos);
}

// The idle lanes against the temporal breakdown (HTA-checked): on a one-device rank the gaps on the
// union of its streams add up to the GPU idle time exactly.
void ExpectIdleGapsMatchTemporalIdle(const RankReport& r, const std::string& what) {
  if (!r.temporal.valid) return;
  auto gaps = DeviceIdleGaps(r);
  if (gaps.size() != 1) return;
  int64_t idle = 0;
  for (const auto& [s, e] : gaps.begin()->second) {
    EXPECT_LT(s, e) << what;
    idle += e - s;
  }
  EXPECT_EQ(idle, r.temporal.idle * r.unit_ns) << what;
}

TEST(HtmlTimelineTest, IdleGapsAddUpToGpuIdleOnEverySampleTrace) {
  size_t checked = 0;
  for (const auto& f : fs::directory_iterator(fs::path(VIGIL_TEST_DATA_DIR) / "traces")) {
    if (f.path().string().find(".json") == std::string::npos) continue;
    auto t = ReadTraces(f.path().string());
    ASSERT_TRUE(t.ok()) << f.path();
    for (bool hta : {false, true}) {
      AnalysisConfig c;
      c.hta_compat = hta;
      Report report = Analyze(*t, c);
      for (const RankReport& r : report.ranks) {
        ExpectIdleGapsMatchTemporalIdle(r, f.path().filename().string());
        if (r.view.size() > 0) {
          EXPECT_NE(Timeline(r).find("<svg class=tl-svg"), std::string::npos);
        }
        checked += r.temporal.valid ? 1 : 0;
      }
    }
  }
  EXPECT_GE(checked, 10u);
}

TEST(FormatMicrosTest, MatchesJsonMicros) {
  EXPECT_EQ(FormatMicros(1419247332972313), "1419247332972.313");
  EXPECT_EQ(FormatMicros(-1500), "-1.500");
  EXPECT_EQ(FormatMicros(7), "0.007");
}

// The 8-rank DLRM trace (param's et_replay inputs): dozens of insights from a few causes.
class DlrmReportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fs::path dir = fs::path(VIGIL_SHARED_DIR) / "traces/param/et_replay/tests/inputs/dlrm_kineto";
    if (!fs::exists(dir)) return;
    auto t = ReadTraces(dir.string());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    traces_ = new std::vector<RankTrace>(std::move(*t));
    report_ = new Report(Analyze(*traces_, AnalysisConfig()));
  }
  static void TearDownTestSuite() {
    delete report_;
    delete traces_;
    report_ = nullptr;
    traces_ = nullptr;
  }
  void SetUp() override {
    if (report_ == nullptr) GTEST_SKIP() << "shared DLRM traces not found under " VIGIL_SHARED_DIR;
  }
  static std::vector<RankTrace>* traces_;
  static Report* report_;
};
std::vector<RankTrace>* DlrmReportTest::traces_ = nullptr;
Report* DlrmReportTest::report_ = nullptr;

TEST_F(DlrmReportTest, InsightCardsAreGroupedByCauseAndOrderedByGain) {
  ASSERT_EQ(report_->ranks.size(), 8u);
  const std::vector<Insight>& insights = report_->insights;
  std::vector<InsightGroup> groups = GroupInsights(insights);
  ASSERT_FALSE(groups.empty());
  EXPECT_LT(groups.size(), insights.size());
  size_t members = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    members += groups[i].members.size();
    for (const Insight* in : groups[i].members) {
      EXPECT_EQ(in->id, groups[i].id);
      EXPECT_LE(in->estimated_gain_pct, groups[i].max_gain_pct);
    }
    if (i > 0) {
      EXPECT_GE(groups[i - 1].max_gain_pct, groups[i].max_gain_pct);
    }
    for (size_t j = 0; j < i; ++j) EXPECT_NE(groups[j].id, groups[i].id);
  }
  EXPECT_EQ(members, insights.size());

  std::string page = RenderHtmlReport(*report_);
  EXPECT_EQ(Count(page, "class=\"card insight-group"), groups.size());
  EXPECT_EQ(Count(page, "<tr class=insight-row>"),
            insights.size() - std::count_if(groups.begin(), groups.end(),
                                            [](const auto& g) { return g.members.size() == 1; }));
  // Cards in the page in gain order.
  std::regex gain(R"re(data-gain="([0-9.]+)")re");
  double last = 1e9;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), gain); it != std::sregex_iterator();
       ++it) {
    double g = std::stod((*it)[1]);
    EXPECT_LE(g, last);
    last = g;
  }
  // The rank comparison comes before the per-rank details.
  size_t ranks = page.find("<h2>Ranks</h2>"), first_rank = page.find("<h2>Rank ");
  ASSERT_NE(ranks, std::string::npos);
  ASSERT_NE(first_rank, std::string::npos);
  EXPECT_LT(page.find("<h2>Insights</h2>"), ranks);
  EXPECT_LT(ranks, first_rank);
  size_t path = page.find("Cross-rank critical path");
  ASSERT_NE(path, std::string::npos);
  EXPECT_LT(path, first_rank);
  // Every rank has a timeline, whose idle lane matches the GPU idle time.
  EXPECT_EQ(Count(page, "<svg class=tl-svg"), 8u);
  for (const RankReport& r : report_->ranks) {
    ExpectIdleGapsMatchTemporalIdle(r, "rank " + std::to_string(r.rank));
  }
}

// The text counts evidence times from the start of the rank's trace; the HTML (like the JSON)
// keeps the trace clock's time, to the nanosecond.
TEST_F(DlrmReportTest, TextSummaryNamesLeftOutInsightsAndTimesEvidenceFromTheTraceStart) {
  TextOptions opt;
  ASSERT_GT(report_->insights.size(), opt.max_insights);
  std::string text = RenderTextSummary(*report_, opt);
  EXPECT_NE(text.find(fmt::format("  ... and {} more insights: --json or --html show all\n",
                                  report_->insights.size() - opt.max_insights)),
            std::string::npos);
  const Evidence* e = nullptr;
  for (const Insight& in : report_->insights) {
    if (!in.evidence.empty()) e = e != nullptr ? e : &in.evidence.front();
  }
  ASSERT_NE(e, nullptr);
  const RankReport* rank = nullptr;
  for (const RankReport& r : report_->ranks) rank = r.rank == e->rank ? &r : rank;
  ASSERT_NE(rank, nullptr);
  const int64_t start = rank->trace->links.first_ts;
  ASSERT_GE(e->ts_ns, start);
  EXPECT_NE(text.find(" at " + FormatDuration(e->ts_ns - start) + " into the trace, for " +
                      FormatDuration(e->dur_ns) + "\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(FormatMicros(e->ts_ns)), std::string::npos) << "no trace-clock times";
  EXPECT_NE(RenderHtmlReport(*report_).find("<td class=num>" + FormatMicros(e->ts_ns) + "</td>"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil::trace
