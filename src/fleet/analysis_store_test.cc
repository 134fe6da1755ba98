// SPDX-License-Identifier: Apache-2.0
#include "fleet/analysis_store.h"

#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_query.h"
#include "fleet/temp_ledger.h"

namespace vigil {
namespace {

using fleet_test::AddGpuTick;
using fleet_test::kSec;
using nlohmann::json;

// One rank's temporal breakdown in seconds: span, compute, exposed comm, exposed memory, idle.
json Rank(double span, double compute, double comm, double mem, double idle, int rank = 0) {
  return json{{"rank", rank},
              {"base_time_ns", 0},
              {"steps", json::array()},
              {"temporal_breakdown",
               {{"valid", true},
                {"kernel_us", span * 1e6},
                {"compute_us", compute * 1e6},
                {"exposed_comm_us", comm * 1e6},
                {"exposed_memory_us", mem * 1e6},
                {"idle_us", idle * 1e6}}}};
}

json Insight(const std::string& id, const std::string& severity, double gain) {
  return json{{"id", id},
              {"severity", severity},
              {"title", id + " title"},
              {"detail", ""},
              {"evidence", json::array()},
              {"estimated_gain_pct", gain},
              {"recommendation", "fix " + id}};
}

std::string Report(json ranks, json insights) {
  return json{{"schema", 1}, {"ranks", ranks}, {"insights", insights}, {"data_quality", {}}}.dump();
}

class AnalysisStoreTest : public ::testing::Test {
 protected:
  StatusOr<int64_t> Store(const std::string& job, const std::string& report,
                          const std::string& source = kAnalysisSourceUpload) {
    return StoreAnalysis(*store_, AnalysisUpload{.job_id = job,
                                                 .host = "h1",
                                                 .source = source,
                                                 .reason = "test",
                                                 .trace_path = "/tmp/t.json",
                                                 .received_ns = UnixNanos(),
                                                 .report_json = report});
  }
  // Over [since, now + 1 s); since 0: the last 7 days.
  json Workflows(int64_t since_ns = 0) {
    const int64_t now = UnixNanos();
    if (since_ns == 0) since_ns = now - 7 * 86400 * kSec;
    auto r =
        store_->Read<json>([&](Db& db) { return QueryWorkflows(db, since_ns, now + kSec, 20); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : json();
  }
  // One hour of reports: job A holds G1 the whole hour (1 GPU-hour), job B holds G2 for the
  // first half (0.5 GPU-hours). The hour starts at t0_.
  void IngestLedger() {
    const int64_t now_s = UnixNanos() / kSec;
    const int64_t t0 = t0_ = (now_s - now_s % 3600 - 7200) * kSec;
    for (int i = 0; i <= 360; ++i) {
      std::vector<IngestSample> s;
      const double t = 10.0 * i;
      AddGpuTick(&s, "G1", t0 + i * 10 * kSec, 0, 0.5, {{.job_id = "A", .alloc_s = t}});
      std::vector<fleet_test::JobCounters> b;
      if (i <= 180) b.push_back({.job_id = "B", .alloc_s = t});
      AddGpuTick(&s, "G2", t0 + i * 10 * kSec, 0, 0.5, b);
      ASSERT_TRUE(
          store_->Ingest(fleet_test::MakeBatch("h1", "b" + std::to_string(i), i, s), UnixNanos())
              .ok());
    }
  }

  int64_t t0_ = 0;
  fleet_test::TempLedger ledger_;
  LedgerStore* const store_ = ledger_.store();
};

TEST_F(AnalysisStoreTest, StoredReportComesBackWithItsSummaryAndInsights) {
  const std::string report =
      Report(json::array({Rank(100, 60, 10, 5, 20), Rank(100, 40, 0, 0, 60, 1)}),
             json::array({Insight("launch_bound", "critical", 40),
                          Insight("low_gpu_utilization", "warning", 20)}));
  StatusOr<int64_t> id = Store("J1", report);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto got = store_->Read<json>([&](Db& db) { return QueryAnalysis(db, *id); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const json& a = *got;
  EXPECT_EQ(a["job_id"], "J1");
  EXPECT_EQ(a["source"], "upload");
  EXPECT_EQ(a["ranks"], 2);
  EXPECT_DOUBLE_EQ(a["gpu_seconds"].get<double>(), 200);
  // 100 of 200 GPU-seconds compute, 10 communication, 5 memory, 80 idle, 5 other.
  EXPECT_NEAR(a["shares"]["compute"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(a["shares"]["communication"].get<double>(), 0.05, 1e-9);
  EXPECT_NEAR(a["shares"]["memory"].get<double>(), 0.025, 1e-9);
  EXPECT_NEAR(a["shares"]["idle"].get<double>(), 0.4, 1e-9);
  EXPECT_NEAR(a["shares"]["other"].get<double>(), 0.025, 1e-9);
  ASSERT_EQ(a["insights"].size(), 2u);
  EXPECT_EQ(a["insights"][0]["id"], "launch_bound");
  EXPECT_EQ(a["insights"][0]["severity"], "critical");
  EXPECT_EQ(a["report"], json::parse(report));

  auto job = store_->Read<json>([&](Db& db) -> StatusOr<json> {
    json out;
    VIGIL_RETURN_IF_ERROR(AddJobAnalyses(db, "J1", &out));
    return out;
  });
  ASSERT_TRUE(job.ok());
  ASSERT_EQ((*job)["analyses"].size(), 1u);
  EXPECT_EQ((*job)["analyses"][0]["id"], *id);
}

TEST_F(AnalysisStoreTest, RealAnalyzeReportGivesItsTraceWindowAndShares) {
  std::ifstream in(std::string(VIGIL_TEST_DATA_DIR) + "/analyses/nccl_sampled_rank-0.json");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  StatusOr<int64_t> id = Store("nccl", text.str(), kAnalysisSourceProfiling);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto got = store_->Read<json>([&](Db& db) { return QueryAnalysis(db, *id); });
  ASSERT_TRUE(got.ok());
  // temporal_breakdown: kernel 1222847 us, compute 210320, exposed comm 336983, idle 675191.
  EXPECT_NEAR((*got)["shares"]["compute"].get<double>(), 210320.0 / 1222847, 1e-9);
  EXPECT_NEAR((*got)["shares"]["communication"].get<double>(), 336983.0 / 1222847, 1e-9);
  // Exposed memory (1303 us) overlaps exposed communication: only the 353 us of non-compute time
  // left after communication count as memory, so the shares sum to 1.
  EXPECT_NEAR((*got)["shares"]["memory"].get<double>(), 353.0 / 1222847, 1e-9);
  double sum = 0;
  for (const auto& [k, v] : (*got)["shares"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_EQ((*got)["steps"], 2);
  EXPECT_EQ((*got)["source"], "profiling");
  // Steps 551 (ts 1682725898079292 us) and 552 (ends 1682725898686653 + 622928 us).
  EXPECT_EQ((*got)["trace_start"], FormatTimestamp(1682725898079292000LL));
  EXPECT_EQ((*got)["insights"][0]["id"], "exposed_communication");
}

TEST_F(AnalysisStoreTest, RejectsWhatIsNotASchemaOneReport) {
  EXPECT_EQ(Store("J", "{not json").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", "[1,2]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", R"({"schema":2,"ranks":[]})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", R"({"schema":1})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", R"({"schema":1,"ranks":{}})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", R"({"schema":1,"ranks":[],"insights":[{"title":"no id"}]})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("", R"({"schema":1,"ranks":[]})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", R"({"schema":1,"ranks":[]})", "somewhere").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Store("J", std::string(kMaxAnalysisReportBytes + 1, ' ')).status().code(),
            StatusCode::kResourceExhausted);
  auto list = store_->Read<json>([](Db& db) { return QueryAnalyses(db, {}); });
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["analyses"].empty());
  EXPECT_TRUE(Store("J", R"({"schema":1,"ranks":[]})").ok());
}

TEST_F(AnalysisStoreTest, WorkflowSharesAreWeightedByLedgerGpuHoursElseTraceTime) {
  IngestLedger();
  // Job A (1 GPU-hour in the ledger), two analyses: 400 s traced, 180 compute, 40 comm, 180 idle.
  ASSERT_TRUE(Store("A", Report(json::array({Rank(100, 60, 10, 0, 30)}),
                                json::array({Insight("low_gpu_utilization", "warning", 20),
                                             Insight("launch_bound", "critical", 40)})))
                  .ok());
  ASSERT_TRUE(Store("A", Report(json::array({Rank(300, 120, 30, 0, 150)}),
                                json::array({Insight("low_gpu_utilization", "critical", 10)})))
                  .ok());
  // Job B (0.5 GPU-hours): two ranks of 50 s, 75 compute, 25 idle.
  ASSERT_TRUE(Store("B", Report(json::array({Rank(50, 50, 0, 0, 0), Rank(50, 25, 0, 0, 25, 1)}),
                                json::array({Insight("straggler", "warning", 5)})))
                  .ok());
  // Job C, unknown to the ledger: 2 x 1800 s traced = 1 GPU-hour; 0.5/0.2/0.1/0.2.
  ASSERT_TRUE(Store("C", Report(json::array({Rank(1800, 900, 360, 180, 360),
                                             Rank(1800, 900, 360, 180, 360, 1)}),
                                json::array({Insight("low_gpu_utilization", "warning", 30),
                                             Insight("exposed_communication", "warning", 15)})))
                  .ok());
  const json w = Workflows();
  EXPECT_EQ(w["analyses"], 4);
  EXPECT_EQ(w["jobs"], 3);
  // Weights 1.0 (A), 0.5 (B), 1.0 (C): total 2.5 GPU-hours, 1.5 of them from the ledger.
  EXPECT_NEAR(w["weight_gpu_hours"].get<double>(), 2.5, 1e-6);
  EXPECT_NEAR(w["ledger_gpu_hours"].get<double>(), 1.5, 1e-6);
  // compute: (1.0*0.45 + 0.5*0.75 + 1.0*0.5) / 2.5 = 0.53; comm (0.1 + 0.2) / 2.5 = 0.12;
  // memory 0.1 / 2.5 = 0.04; idle (0.45 + 0.125 + 0.2) / 2.5 = 0.31.
  EXPECT_NEAR(w["shares"]["compute"].get<double>(), 0.53, 1e-6);
  EXPECT_NEAR(w["shares"]["communication"].get<double>(), 0.12, 1e-6);
  EXPECT_NEAR(w["shares"]["memory"].get<double>(), 0.04, 1e-6);
  EXPECT_NEAR(w["shares"]["idle"].get<double>(), 0.31, 1e-6);
  EXPECT_NEAR(w["shares"]["other"].get<double>(), 0.0, 1e-6);

  const json& ins = w["insights"];
  ASSERT_EQ(ins.size(), 4u) << ins.dump(2);
  EXPECT_EQ(ins[0]["id"], "low_gpu_utilization");
  EXPECT_EQ(ins[0]["jobs"], 2);
  EXPECT_EQ(ins[0]["analyses"], 3);
  EXPECT_EQ(ins[0]["severity"], "critical");
  EXPECT_NEAR(ins[0]["gpu_hours"].get<double>(), 2.0, 1e-6);
  EXPECT_NEAR(ins[0]["mean_estimated_gain_pct"].get<double>(), 20.0, 1e-9);
  EXPECT_EQ(ins[3]["id"], "straggler");
  EXPECT_NEAR(ins[3]["gpu_hours"].get<double>(), 0.5, 1e-6);

  // Gain of each job's latest analysis: C 30 % of 1.0, A 10 % of 1.0, B 5 % of 0.5.
  const json& top = w["top_jobs"];
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0]["job_id"], "C");
  EXPECT_EQ(top[0]["weight_source"], "trace");
  EXPECT_NEAR(top[0]["estimated_gain_gpu_hours"].get<double>(), 0.3, 1e-6);
  EXPECT_EQ(top[1]["job_id"], "A");
  EXPECT_EQ(top[1]["weight_source"], "ledger");
  EXPECT_NEAR(top[1]["estimated_gain_gpu_hours"].get<double>(), 0.1, 1e-6);
  EXPECT_EQ(top[2]["job_id"], "B");
  EXPECT_NEAR(top[2]["estimated_gain_gpu_hours"].get<double>(), 0.025, 1e-6);

  // The job page of A lists both analyses, newest first.
  auto job = store_->Read<json>([](Db& db) { return QueryJob(db, "A", 0); });
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ((*job)["analyses"].size(), 2u);
  EXPECT_GT((*job)["analyses"][0]["id"].get<int64_t>(), (*job)["analyses"][1]["id"].get<int64_t>());
}

TEST_F(AnalysisStoreTest, WorkflowWeightsCountTheExactWindowNotItsWholeHours) {
  IngestLedger();
  ASSERT_TRUE(Store("A", Report(json::array({Rank(100, 60, 10, 0, 30)}), json::array())).ok());
  ASSERT_TRUE(Store("B", Report(json::array({Rank(100, 100, 0, 0, 0)}), json::array())).ok());
  // From a quarter past the ledger's hour: A held its GPU for 45 of the window's minutes, B for
  // 15 (it stopped at half past). The whole hour would give 1.0 and 0.5.
  const json w = Workflows(t0_ + 900 * kSec);
  std::map<std::string, json> jobs;
  for (const json& j : w["top_jobs"]) jobs[j["job_id"].get<std::string>()] = j;
  ASSERT_EQ(jobs.size(), 2u) << w.dump(2);
  EXPECT_EQ(jobs["A"]["weight_source"], "ledger");
  EXPECT_NEAR(jobs["A"]["gpu_hours"].get<double>(), 0.75, 1e-6);
  EXPECT_NEAR(jobs["B"]["gpu_hours"].get<double>(), 0.25, 1e-6);
  EXPECT_NEAR(w["ledger_gpu_hours"].get<double>(), 1.0, 1e-6);
  // compute (0.75 x 0.6 + 0.25 x 1.0) / 1.0.
  EXPECT_NEAR(w["shares"]["compute"].get<double>(), 0.7, 1e-6);
  EXPECT_EQ(w["ledger_window"]["since_s"], t0_ / kSec + 900);
  EXPECT_TRUE(w["ledger_window"]["whole_hour_edges"].empty());
}

// The rank's `roofline` object as vigil analyze writes it (seconds in, microseconds out).
json WithRoofline(json rank, double roofline, double replayed, double kernel, double modelled,
                  double pct) {
  rank["roofline"] = json{{"roofline_us", roofline * 1e6}, {"replayed_us", replayed * 1e6},
                          {"kernel_us", kernel * 1e6},     {"modelled_kernel_us", modelled * 1e6},
                          {"pct_of_replayed", pct},        {"coverage", modelled / kernel}};
  return rank;
}

TEST_F(AnalysisStoreTest, WorkflowsShowEachJobsPercentOfRoofline) {
  // Job R: one rank at 2 s of roofline over 8 s replayed (25 %), 6 of 10 s modelled; a second
  // rank on a GPU without peaks (-1) adds its kernel time to the coverage only; a second analysis
  // at 3 s over 4 s. Job N's report has no roofline objects.
  ASSERT_TRUE(Store("R", Report(json::array({WithRoofline(Rank(10, 8, 0, 0, 2), 2, 8, 10, 6, 25),
                                             WithRoofline(Rank(5, 4, 0, 0, 1, 1), 0, 5, 4, 4, -1)}),
                                json::array()))
                  .ok());
  ASSERT_TRUE(Store("R", Report(json::array({WithRoofline(Rank(4, 4, 0, 0, 0), 3, 4, 4, 4, 75)}),
                                json::array()))
                  .ok());
  ASSERT_TRUE(Store("N", Report(json::array({Rank(10, 5, 0, 0, 5)}), json::array())).ok());
  const json w = Workflows();
  std::map<std::string, json> jobs;
  for (const json& j : w["top_jobs"]) jobs[j["job_id"].get<std::string>()] = j;
  ASSERT_EQ(jobs.size(), 2u) << w.dump(2);
  // (2 + 3) / (8 + 4) = 41.67 %; (6 + 4 + 4) / (10 + 4 + 4) = 0.778 modelled.
  EXPECT_NEAR(jobs["R"]["roofline_pct"].get<double>(), 100.0 * 5 / 12, 1e-9);
  EXPECT_NEAR(jobs["R"]["roofline_coverage"].get<double>(), 14.0 / 18, 1e-9);
  EXPECT_TRUE(jobs["N"]["roofline_pct"].is_null());
  EXPECT_TRUE(jobs["N"]["roofline_coverage"].is_null());
}

TEST_F(AnalysisStoreTest, WorkflowsOfAnEmptyWindowAreZero) {
  const json w = Workflows();
  EXPECT_EQ(w["analyses"], 0);
  EXPECT_EQ(w["shares"]["compute"], 0.0);
  EXPECT_TRUE(w["insights"].empty());
  EXPECT_TRUE(w["top_jobs"].empty());
}

}  // namespace
}  // namespace vigil
