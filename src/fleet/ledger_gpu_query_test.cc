// SPDX-License-Identifier: Apache-2.0
// The per-host and per-GPU series (ledger_gpu_query.h) against means computed here from the
// values pushed: exact windows cut the first and last buckets, power falls back to the energy
// counter, the jobs a GPU held are listed, and bad windows, steps and names are refused; and a
// job's SM activity (ledger_query.h) is its GPU's, not its busy share.
#include "fleet/ledger_gpu_query.h"

#include <map>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_query.h"
#include "fleet/ledger_store.h"
#include "fleet/temp_ledger.h"

namespace vigil {
namespace {

using fleet_test::kSec;
using fleet_test::S;
using nlohmann::json;

constexpr int kTicks = 120;  // One report a minute for two hours.

double Util(int i) { return (i % 30) / 100.0; }
double Power(int i) { return 100.0 + i; }

class LedgerGpuQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t now_s = UnixNanos() / kSec;
    t0_ = (now_s - now_s % 3600 - 3 * 3600) * kSec;
    for (int i = 0; i <= kTicks; ++i) {
      const int64_t t = t0_ + i * 60 * kSec;
      std::vector<IngestSample> s;
      std::vector<fleet_test::JobCounters> jobs;
      if (i >= 1 && i <= 60)
        jobs.push_back({.job_id = "J", .alloc_s = 60.0 * i, .busy_s = 20.0 * i});
      fleet_test::AddGpuTick(&s, "G0", t, 0, 0.5, jobs);
      fleet_test::AddGpuTick(&s, "G1", t, 200.0 * 60 * i, 0.2, {});  // 200 W by its energy.
      const Labels g0 = {{"gpu_model", "H100"}, {"gpu_uuid", "G0"}};
      s.push_back(S("vigil_gpu_utilization_ratio", false, g0, Util(i), t));
      s.push_back(S("vigil_gpu_power_watts", false, g0, Power(i), t));
      s.push_back(S("vigil_gpu_temperature_celsius", false, g0, 40 + i % 7, t));
      s.push_back(S("vigil_gpu_memory_used_bytes", false, g0, 1e9 * (i % 5), t));
      s.push_back(S("vigil_gpu_memory_total_bytes", false, g0, 80e9, t));
      s.push_back(S("vigil_gpu_power_watts", false, g0, NAN, t));  // Not counted.
      auto r = ledger_.store()->Ingest(
          fleet_test::MakeBatch("h1", "b" + std::to_string(i), i, std::move(s)), UnixNanos());
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }
  StatusOr<json> Query(const std::string& host, const std::string& uuid, int64_t since_ns,
                       int64_t until_ns, int64_t step_s) {
    return ledger_.store()->Read<json>([&](Db& db) {
      return QueryGpuSeries(db, {host, uuid, since_ns, until_ns, step_s});
    });
  }
  static double MeanOf(double (*f)(int), int from, int to) {  // Ticks [from, to).
    double sum = 0;
    for (int i = from; i < to; ++i) sum += f(i);
    return sum / (to - from);
  }

  fleet_test::TempLedger ledger_;
  int64_t t0_ = 0;
};

TEST_F(LedgerGpuQueryTest, BucketsHoldTheMeansOfTheWindowExactly) {
  // 00:10:27 to 01:40:00 in 30-minute buckets: a cut first bucket, two whole, a cut last.
  const int64_t since = t0_ + 627 * kSec, until = t0_ + 6000 * kSec;
  auto r = Query("h1", "", since, until, 1800);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& out = *r;
  EXPECT_EQ(out["since_s"], since / kSec);
  EXPECT_EQ(out["until_s"], until / kSec);
  EXPECT_EQ(out["step_s"], 1800);
  ASSERT_EQ(out["gpus"].size(), 2u) << out.dump(2);
  const json& g0 = out["gpus"][0];
  EXPECT_EQ(g0["gpu_uuid"], "G0");
  std::map<int64_t, json> at;
  for (const json& p : g0["points"]) at[p["t"].get<int64_t>()] = p;
  const int64_t t0_s = t0_ / kSec;
  ASSERT_EQ(at.size(), 4u) << g0.dump(2);
  // The minute of a report holds its gauges: minutes 10..29 in the first bucket.
  ASSERT_TRUE(at.count(since / kSec));
  EXPECT_NEAR(at[since / kSec]["utilization_ratio"].get<double>(), MeanOf(Util, 10, 30), 1e-12);
  const json& b1 = at[t0_s + 1800];
  EXPECT_NEAR(b1["utilization_ratio"].get<double>(), MeanOf(Util, 30, 60), 1e-12);
  EXPECT_NEAR(b1["power_watts"].get<double>(), MeanOf(Power, 30, 60), 1e-9);
  EXPECT_NEAR(b1["sm_active_ratio"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(b1["memory_used_bytes"].get<double>(), 2e9, 1e-3);  // 0..4 GB, six times each.
  EXPECT_NEAR(b1["memory_total_bytes"].get<double>(), 80e9, 1e-3);
  EXPECT_TRUE(b1["flops_estimated"].is_null());
  // The interval before each report is its minute's: 30 minutes of wall, the job's counters.
  EXPECT_NEAR(b1["reported_s"].get<double>(), 1800, 1e-6);
  EXPECT_NEAR(b1["allocated_s"].get<double>(), 1800, 1e-6);
  EXPECT_NEAR(b1["busy_s"].get<double>(), 600, 1e-6);
  const json& b2 = at[t0_s + 3600];
  EXPECT_NEAR(b2["allocated_s"].get<double>(), 0, 1e-6);  // The job's last minute was 59.
  const json& last = at[t0_s + 5400];
  EXPECT_NEAR(last["reported_s"].get<double>(), 600, 1e-6);  // Minutes 90..99 only.
  EXPECT_NEAR(last["utilization_ratio"].get<double>(), MeanOf(Util, 90, 100), 1e-12);

  // G1 reports no power gauge: its energy counter over the reported time gives 200 W.
  const json& g1 = out["gpus"][1];
  EXPECT_EQ(g1["gpu_uuid"], "G1");
  EXPECT_NEAR(g1["points"][1]["power_watts"].get<double>(), 200, 1e-6) << g1.dump(2);
  EXPECT_TRUE(g1["points"][1]["utilization_ratio"].is_null());
  EXPECT_NEAR(g1["summary"]["sm_active_ratio"].get<double>(), 0.2, 1e-12);

  // Job J held G0 in minutes 10..59 of the window: 50 GPU-minutes, a third of them busy.
  ASSERT_EQ(out["jobs"].size(), 1u) << out["jobs"].dump(2);
  const json& j = out["jobs"][0];
  EXPECT_EQ(j["job_id"], "J");
  EXPECT_EQ(j["gpus"], json::array({"G0"}));
  EXPECT_NEAR(j["allocated_gpu_hours"].get<double>(), 50.0 / 60, 1e-9);
  EXPECT_NEAR(j["busy_gpu_hours"].get<double>(), 50.0 / 3 / 60, 1e-9);
  EXPECT_EQ(j["first_s"], since / kSec);
  EXPECT_EQ(j["last_s"], t0_s + 3600);
}

TEST_F(LedgerGpuQueryTest, AJobsSmActivityIsWhatItsGpuMeasuredNotItsBusyShare) {
  auto j = ledger_.store()->Read<json>([&](Db& db) { return QueryJob(db, "J", 0); });
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_NEAR((*j)["mean_sm_active_ratio"].get<double>(), 0.5, 1e-12) << j->dump(2);
  EXPECT_NEAR((*j)["busy_ratio"].get<double>(), 1.0 / 3, 1e-9);
}

TEST_F(LedgerGpuQueryTest, OneGpuAndItsJobs) {
  auto r = Query("h1", "G1", t0_, t0_ + 7200 * kSec, 0);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)["gpus"].size(), 1u);
  EXPECT_EQ((*r)["gpus"][0]["gpu_uuid"], "G1");
  EXPECT_EQ((*r)["step_s"], 60);  // Two hours: one-minute buckets.
  EXPECT_EQ((*r)["gpus"][0]["points"].size(), 120u);
  EXPECT_TRUE((*r)["jobs"].empty());
}

TEST_F(LedgerGpuQueryTest, RetentionDropsTheGaugesWithTheMinuteRows) {
  ASSERT_TRUE(ledger_.store()->ApplyRetention(UnixNanos() + 200LL * 86400 * kSec).ok());
  auto r = Query("h1", "G0", t0_, t0_ + 7200 * kSec, 0);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)["gpus"][0]["points"].empty()) << r->dump(2);
  EXPECT_TRUE((*r)["gpus"][0]["summary"]["utilization_ratio"].is_null());
}

TEST_F(LedgerGpuQueryTest, RefusesUnknownNamesAndBadSteps) {
  const int64_t since = t0_, until = t0_ + 3600 * kSec;
  EXPECT_EQ(Query("nope", "", since, until, 60).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Query("h1", "G9", since, until, 60).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Query("h1", "", since, until, 90).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Query("h1", "", until, since, 60).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Query("h1", "", since - 30LL * 86400 * kSec, until, 60).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(DefaultGpuStepTest, AtMost360Buckets) {
  EXPECT_EQ(DefaultGpuStep(3600), 60);
  EXPECT_EQ(DefaultGpuStep(6 * 3600), 60);
  EXPECT_EQ(DefaultGpuStep(86400), 300);
  EXPECT_EQ(DefaultGpuStep(7 * 86400), 1800);
  EXPECT_EQ(DefaultGpuStep(30 * 86400), 7200);
  EXPECT_EQ(DefaultGpuStep(3650LL * 86400), 86400);
}

}  // namespace
}  // namespace vigil
