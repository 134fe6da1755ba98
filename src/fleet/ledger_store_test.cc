// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_store.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_query.h"

namespace vigil {
namespace {

using fleet_test::AddGpuTick;
using fleet_test::JobCounters;
using fleet_test::kSec;
using nlohmann::json;

class LedgerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("vigil-ledger-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Reopen();
    // Two hours ago, on an hour boundary, so the window "since 7d" holds everything.
    const int64_t now_s = UnixNanos() / kSec;
    t0_ = (now_s - now_s % 3600 - 7200) * kSec;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();
    LedgerOptions o;
    o.path = (dir_ / "var" / "fleet.db").string();
    auto s = LedgerStore::Open(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  // Host h1: G1 held by team-a's job A, G2 by team-b's job B for the first half only.
  // Every 10 s for `ticks` reports.
  IngestBatch Tick(int i) {
    std::vector<IngestSample> s;
    const double t = 10.0 * i;
    AddGpuTick(&s, "G1", t0_ + i * 10 * kSec, 30 * t, 0.5,
               {{.job_id = "A", .alloc_s = t, .busy_s = t / 2, .energy_j = 30 * t}});
    std::vector<JobCounters> b;
    if (i <= 180) {
      b.push_back({.job_id = "B",
                   .team = "team-b",
                   .model = "bert",
                   .user = "bob",
                   .alloc_s = t,
                   .held_idle_s = t,
                   .energy_j = 10 * t});
    }
    AddGpuTick(&s, "G2", t0_ + i * 10 * kSec, 10 * t, 0, b, "A100");
    return fleet_test::MakeBatch("h1", "h1-" + std::to_string(i), i, std::move(s));
  }
  json Attribution(const std::string& by, double price = 0) {
    AttributionQuery q;
    q.by = by;
    q.since_ns = UnixNanos() - 7 * 86400 * kSec;
    q.until_ns = UnixNanos();
    q.price_per_gpu_hour = price;
    auto r = store_->Read<json>([&](Db& db) { return QueryAttribution(db, q); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : json();
  }
  static const json* Key(const json& a, const std::string& key) {
    for (const json& r : a["rows"]) {
      if (r["key"] == key) return &r;
    }
    return nullptr;
  }

  std::filesystem::path dir_;
  std::unique_ptr<LedgerStore> store_;
  int64_t t0_ = 0;
};

TEST_F(LedgerStoreTest, AttributionByTeamSplitsBusyHeldIdleAndIdleHours) {
  for (int i = 0; i <= 360; ++i) {  // One hour.
    ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  }
  const json a = Attribution("team", 2.0);
  const json* team_a = Key(a, "team-a");
  const json* team_b = Key(a, "team-b");
  const json* idle = Key(a, kUnallocatedKey);
  ASSERT_TRUE(team_a && team_b && idle) << a.dump(2);
  EXPECT_NEAR((*team_a)["allocated_gpu_hours"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR((*team_a)["busy_gpu_hours"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR((*team_b)["allocated_gpu_hours"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR((*team_b)["held_idle_gpu_hours"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR((*idle)["idle_gpu_hours"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(a["totals"]["gpu_hours"].get<double>(), 2.0, 1e-9);  // 2 GPUs x 1 h.
  EXPECT_NEAR(a["totals"]["cost"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR((*team_a)["energy_joules"].get<double>(), 30 * 3600.0, 1e-6);

  const json by_model = Attribution("gpu_model");
  const json* a100 = Key(by_model, "A100");
  ASSERT_TRUE(a100) << by_model.dump(2);
  EXPECT_NEAR((*a100)["idle_gpu_hours"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR((*a100)["gpu_hours"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR((*a100)["energy_joules"].get<double>(), 36000.0, 1e-6);  // Device energy.
}

TEST_F(LedgerStoreTest, DuplicateBatchChangesNothing) {
  for (int i = 0; i <= 6; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  const double before = Attribution("team")["totals"]["gpu_hours"].get<double>();
  auto again = store_->Ingest(Tick(3), UnixNanos());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(Attribution("team")["totals"]["gpu_hours"].get<double>(), before);
  EXPECT_NEAR(before * 3600, 2 * 60.0, 1e-9);
}

TEST_F(LedgerStoreTest, DifferencingStateSurvivesARestart) {
  for (int i = 0; i <= 30; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  Reopen();
  for (int i = 31; i <= 60; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  const json a = Attribution("job");
  ASSERT_TRUE(Key(a, "A")) << a.dump(2);
  EXPECT_NEAR((*Key(a, "A"))["allocated_gpu_hours"].get<double>() * 3600, 600.0, 1e-9);
  EXPECT_NEAR(a["totals"]["gpu_hours"].get<double>() * 3600, 1200.0, 1e-9);
}

TEST_F(LedgerStoreTest, JobsHostsAndTopWasters) {
  for (int i = 0; i <= 60; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  const int64_t now = UnixNanos();
  auto job = store_->Read<json>([&](Db& db) { return QueryJob(db, "B", 1.0); });
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_NEAR((*job)["gpu_hours"].get<double>() * 3600, 600.0, 1e-9);
  EXPECT_EQ((*job)["gpus"].size(), 1u);
  EXPECT_EQ((*job)["gpus"][0]["gpu_model"], "A100");
  EXPECT_DOUBLE_EQ((*job)["duration_s"].get<double>(), 600.0);
  EXPECT_EQ(store_->Read<json>([&](Db& db) { return QueryJob(db, "nope", 1.0); }).status().code(),
            StatusCode::kNotFound);
  auto wasters = store_->Read<json>(
      [&](Db& db) { return QueryTopWasters(db, now - 86400 * kSec, now, 1.0, 10); });
  ASSERT_TRUE(wasters.ok());
  EXPECT_EQ((*wasters)["jobs"][0]["job_id"], "B");
  auto hosts = store_->Read<json>([&](Db& db) { return QueryHosts(db, now); });
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ((*hosts)["hosts"].size(), 1u);
  EXPECT_EQ((*hosts)["hosts"][0]["gpu_count"], 2);
  EXPECT_EQ((*hosts)["hosts"][0]["batches"], 61);
}

TEST_F(LedgerStoreTest, RetentionForgetsSeriesSilentForTheIdempotencyWindow) {
  for (int i = 0; i <= 6; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  auto series_rows = [&] {
    auto n = store_->Read<int64_t>([](Db& db) -> StatusOr<int64_t> {
      VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT count(*) FROM series"));
      VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
      return row ? st.Int(0) : -1;
    });
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : -1;
  };
  const int64_t live = series_rows();
  ASSERT_GT(live, 4);
  EXPECT_EQ(store_->series_in_memory(), static_cast<size_t>(live));
  // Six days later the state is kept; eight days later (past the 7-day window) it is gone.
  ASSERT_TRUE(store_->ApplyRetention(UnixNanos() + 6LL * 86400 * kSec).ok());
  EXPECT_EQ(series_rows(), live);
  EXPECT_EQ(store_->series_in_memory(), static_cast<size_t>(live));
  ASSERT_TRUE(store_->ApplyRetention(UnixNanos() + 8LL * 86400 * kSec).ok());
  EXPECT_EQ(series_rows(), 0);
  EXPECT_EQ(store_->series_in_memory(), 0u);
  // A series seen again starts afresh: its first point adds nothing, the next one counts.
  const double before = Attribution("team")["totals"]["gpu_hours"].get<double>();
  ASSERT_TRUE(store_->Ingest(Tick(7), UnixNanos()).ok());
  EXPECT_NEAR(Attribution("team")["totals"]["gpu_hours"].get<double>(), before, 1e-12);
  ASSERT_TRUE(store_->Ingest(Tick(8), UnixNanos()).ok());
  EXPECT_GT(Attribution("team")["totals"]["gpu_hours"].get<double>(), before);
  Reopen();
  EXPECT_EQ(store_->series_in_memory(), static_cast<size_t>(series_rows()));
}

TEST_F(LedgerStoreTest, RetentionDropsOldMinutes) {
  for (int i = 0; i <= 6; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  ASSERT_TRUE(store_->ApplyRetention(UnixNanos() + 200LL * 86400 * kSec).ok());
  auto n = store_->Read<int64_t>([](Db& db) -> StatusOr<int64_t> {
    VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT count(*) FROM ledger_minute"));
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    return row ? st.Int(0) : -1;
  });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  // Hourly rollups outlive the minute rows.
  EXPECT_NEAR(Attribution("team")["totals"]["gpu_hours"].get<double>() * 3600, 120, 1e-9);
  ASSERT_TRUE(store_->ApplyRetention(UnixNanos() + 500LL * 86400 * kSec).ok());
  EXPECT_NEAR(Attribution("team")["totals"]["gpu_hours"].get<double>(), 0, 1e-12);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST_F(LedgerStoreTest, BatchWithOnlyJobSamplesOfANewGpuIsAccepted) {
  // A payload cut by the sample limit can hold a GPU's job counters without its GPU-level
  // samples (no gpu_model label).
  std::vector<IngestSample> s = {fleet_test::S("vigil_gpu_allocated_seconds_total", true,
                                               {{"gpu_uuid", "G9"}, {"job_id", "Z"}}, 10, t0_)};
  auto r = store_->Ingest(fleet_test::MakeBatch("h9", "only-jobs", 1, s), UnixNanos());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->duplicate);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// libvigil_client's job gauges (job_id labels, no GPU) for job B every tick: MFU 0.4 and 0.6 in
// turn, 1e12 model FLOPs per step, 0.5 s steps.
void AddJobGauges(std::vector<IngestSample>* s, int i, int64_t t) {
  const Labels l = {{"framework", "jax"}, {"job_id", "B"}, {"team", "team-b"}};
  s->push_back(fleet_test::S("vigil_job_mfu_ratio", false, l, i % 2 ? 0.6 : 0.4, t));
  s->push_back(fleet_test::S("vigil_job_model_flops", false, l, 1e12, t));
  s->push_back(fleet_test::S("vigil_job_step_seconds", false, l, 0.5, t));
  s->push_back(
      fleet_test::S("vigil_job_device_seconds_per_input_byte", false, l, i % 2 ? 4e-9 : 2e-9, t));
}

TEST_F(LedgerStoreTest, JobApisShowMeanMfuFlopsAndStepTimeFromClientReports) {
  for (int i = 0; i <= 59; ++i) {
    IngestBatch b = Tick(i);
    AddJobGauges(&b.samples, i, t0_ + i * 10 * kSec);
    auto r = store_->Ingest(b, UnixNanos());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (i == 30) Reopen();  // Sums stored so far survive a restart.
  }
  auto job = store_->Read<json>([&](Db& db) { return QueryJob(db, "B", 1.0); });
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_NEAR((*job)["mfu_ratio"].get<double>(), 0.5, 1e-12) << job->dump(2);
  EXPECT_NEAR((*job)["model_flops_per_step"].get<double>(), 1e12, 1e-3);
  EXPECT_NEAR((*job)["step_seconds"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR((*job)["model_flops_per_second"].get<double>(), 2e12, 1e-3);
  // 30 reports of 2e-9 and 30 of 4e-9 device-seconds per input byte.
  EXPECT_NEAR((*job)["device_seconds_per_input_byte"].get<double>(), 3e-9, 1e-21);
  auto a = store_->Read<json>([&](Db& db) { return QueryJob(db, "A", 1.0); });
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE((*a)["mfu_ratio"].is_null()) << a->dump(2);  // Job A never reported.

  const int64_t now = UnixNanos();
  auto jobs =
      store_->Read<json>([&](Db& db) { return QueryJobs(db, now - 86400 * kSec, now, 1.0, 10); });
  ASSERT_TRUE(jobs.ok());
  std::map<std::string, json> by_id;
  for (const json& j : (*jobs)["jobs"]) by_id[j["job_id"]] = j;
  ASSERT_TRUE(by_id.count("A") && by_id.count("B")) << jobs->dump(2);
  EXPECT_NEAR(by_id["B"]["mfu_ratio"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(by_id["B"]["device_seconds_per_input_byte"].get<double>(), 3e-9, 1e-21);
  EXPECT_TRUE(by_id["A"]["mfu_ratio"].is_null());
  EXPECT_TRUE(by_id["A"]["device_seconds_per_input_byte"].is_null());

  const json by_job = Attribution("job");
  ASSERT_TRUE(Key(by_job, "B")) << by_job.dump(2);
  EXPECT_NEAR((*Key(by_job, "B"))["mfu_ratio"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR((*Key(by_job, "B"))["step_seconds"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR((*Key(by_job, "B"))["device_seconds_per_input_byte"].get<double>(), 3e-9, 1e-21);
  ASSERT_TRUE(Key(by_job, "A"));
  EXPECT_TRUE((*Key(by_job, "A"))["mfu_ratio"].is_null());

  // A window with no reports gives nulls; retention drops the minutes with the ledger's.
  auto none = store_->Read<json>([&](Db& db) { return QueryJobEfficiency(db, "B", 0, 60); });
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)["mfu_ratio"].is_null());
  ASSERT_TRUE(store_->ApplyRetention(UnixNanos() + 200LL * 86400 * kSec).ok());
  job = store_->Read<json>([&](Db& db) { return QueryJob(db, "B", 1.0); });
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE((*job)["mfu_ratio"].is_null());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

int64_t Count(LedgerStore& store, const std::string& table) {
  auto n = store.Read<int64_t>([&](Db& db) -> StatusOr<int64_t> {
    VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT count(*) FROM " + table));
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    return row ? st.Int(0) : -1;
  });
  return n.ok() ? *n : -1;
}

TEST_F(LedgerStoreTest, RetentionDropsOldProfilingRequestsWithTheirFilesAndOldAnalyses) {
  const std::string trace_dir = (dir_ / "var" / "traces" / "req-1").string();
  std::filesystem::create_directories(trace_dir);
  { std::ofstream(trace_dir + "/h1-42.json.gz") << "x"; }
  const int64_t now = UnixNanos();
  auto wrote = store_->Write<bool>([&](Db& db) -> StatusOr<bool> {
    VIGIL_RETURN_IF_ERROR(
        db.Exec("INSERT INTO profiling_requests (request_id, job_id, reason, trigger, duration_ms,"
                " iterations, state, created_ns, updated_ns, deadline_ns, trace_dir) VALUES"
                " ('req-1', 'A', 'r', 'manual', 500, 0, 'analysed', " +
                std::to_string(now) + ", 0, 0, '" + trace_dir +
                "');"
                "INSERT INTO profiling_decisions (time_ns, job_id, decision, reason) VALUES (" +
                std::to_string(now) +
                ", 'A', 'fired', 'low');"
                "INSERT INTO analyses (job_id, received_ns, source, report_bytes, report_gz) VALUES"
                " ('A', " +
                std::to_string(now) +
                ", 'upload', 1, x'00');"
                "INSERT INTO analysis_insights (analysis_id, seq, insight, severity) VALUES"
                " (last_insert_rowid(), 0, 'launch_bound', 'warning');"));
    return true;
  });
  ASSERT_TRUE(wrote.ok()) << wrote.status().ToString();

  ASSERT_TRUE(store_->ApplyRetention(now + 10LL * 86400 * kSec).ok());
  EXPECT_EQ(Count(*store_, "profiling_requests"), 1);
  EXPECT_TRUE(std::filesystem::exists(trace_dir));

  // Past the minute retention: requests, decisions and their trace files go.
  ASSERT_TRUE(store_->ApplyRetention(now + 200LL * 86400 * kSec).ok());
  EXPECT_EQ(Count(*store_, "profiling_requests"), 0);
  EXPECT_EQ(Count(*store_, "profiling_decisions"), 0);
  EXPECT_FALSE(std::filesystem::exists(trace_dir));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "var" / "traces"));
  EXPECT_EQ(Count(*store_, "analyses"), 1);  // Analyses live as long as the hourly rollups.

  ASSERT_TRUE(store_->ApplyRetention(now + 500LL * 86400 * kSec).ok());
  EXPECT_EQ(Count(*store_, "analyses"), 0);
  EXPECT_EQ(Count(*store_, "analysis_insights"), 0);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// A full disk, simulated with SQLite's page limit on the writer: the batch that needs new pages
// is refused (ResourceExhausted, which the service answers 503 so the daemon keeps it spooled),
// nothing of it is half applied, and the same batch goes in whole once there is room again.
TEST_F(LedgerStoreTest, DiskFullRefusesTheBatchWholeAndTheRetryAfterwardsCountsItOnce) {
  for (int i = 0; i <= 10; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  const json before = Attribution("team");
  auto limit = [&](const std::string& pages) {
    return store_->Write<bool>([&](Db& db) -> StatusOr<bool> {
      VIGIL_RETURN_IF_ERROR(db.Exec("PRAGMA max_page_count = " + pages));
      return true;
    });
  };
  auto page_count = store_->Write<int64_t>([](Db& db) -> StatusOr<int64_t> {
    VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare("PRAGMA page_count"));
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    return row ? st.Int(0) : -1;
  });
  ASSERT_TRUE(page_count.ok());
  ASSERT_TRUE(limit(std::to_string(*page_count)).ok());

  // Many new GPUs and jobs: rows that need pages the "disk" does not have.
  std::vector<IngestSample> s;
  for (int g = 0; g < 400; ++g) {
    fleet_test::AddGpuTick(&s, "GX" + std::to_string(g), t0_ + 110 * kSec, 5.0 * g, 0.25,
                           {{.job_id = "J" + std::to_string(g), .alloc_s = 10, .busy_s = 5}});
  }
  const IngestBatch big = fleet_test::MakeBatch("h2", "h2-full", 1, s);
  StatusOr<IngestResult> refused = store_->Ingest(big, UnixNanos());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted) << refused.status().ToString();
  EXPECT_EQ(Attribution("team")["rows"], before["rows"]) << "a refused batch changed the ledger";

  ASSERT_TRUE(limit("1073741823").ok());
  StatusOr<IngestResult> retried = store_->Ingest(big, UnixNanos());
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_FALSE(retried->duplicate);
  StatusOr<IngestResult> again = store_->Ingest(big, UnixNanos());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  // The batches that follow still difference against the right state.
  for (int i = 11; i <= 20; ++i) ASSERT_TRUE(store_->Ingest(Tick(i), UnixNanos()).ok());
  const json after = Attribution("team");
  const json* team_a = Key(after, "team-a");
  ASSERT_NE(team_a, nullptr);
  EXPECT_NEAR((*team_a)["allocated_gpu_hours"].get<double>() * 3600, 200, 1e-6);
}

}  // namespace
}  // namespace vigil
