// SPDX-License-Identifier: Apache-2.0
// Exact windows of the attribution and jobs queries (ledger_window.h, ledger_query.h) against
// GPU-seconds worked out by hand from the minutes pushed: three hours from T (on the hour), GPU
// G1 of host h1 held by team-a's job A in minutes [0, 150), G2 of host h2 by team-b's job B in
// minutes [30, 180), every GPU reporting at each minute. Per minute k: A is allocated 60 s, busy
// 20 x (k mod 3) s, held idle 60 s when k mod 3 = 0, 40 J; B is allocated 60 s, busy (k mod 60)
// s, held idle 30 s, 20 J; G1 draws 100 J, G2 50 J. Windows with edges inside hours, inside
// minutes, inside one hour, with buckets that start off the hour, and with edge minutes past
// their retention.
#include "fleet/ledger_window.h"

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_query.h"
#include "fleet/temp_ledger.h"

namespace vigil {
namespace {

using fleet_test::kSec;
using nlohmann::json;

constexpr int64_t kMin = 60 * kSec;

double ABusy(int k) { return 20.0 * (k % 3); }
double AHeld(int k) { return k % 3 == 0 ? 60.0 : 0.0; }
double BBusy(int k) { return k % 60; }

// Counter totals of a job active from minute `start`, reported at minute i (minutes [start, i)).
fleet_test::JobCounters Counters(bool a, int start, int i) {
  fleet_test::JobCounters c{.job_id = a ? "A" : "B"};
  if (!a) {
    c.team = "team-b";
    c.model = "bert";
    c.user = "bob";
  }
  for (int k = start; k < i; ++k) {
    c.alloc_s += 60;
    c.busy_s += a ? ABusy(k) : BBusy(k);
    c.held_idle_s += a ? AHeld(k) : 30;
    c.energy_j += a ? 40 : 20;
  }
  return c;
}

class LedgerWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t now_s = UnixNanos() / kSec;
    t0_ = (now_s - now_s % 3600 - 4 * 3600) * kSec;
    for (int i = 0; i <= 180; ++i) {
      const int64_t t = t0_ + i * kMin;
      std::vector<IngestSample> s1, s2;
      std::vector<fleet_test::JobCounters> a, b;
      if (i >= 1 && i <= 150) a.push_back(Counters(true, 0, i));
      if (i >= 31) b.push_back(Counters(false, 30, i));
      fleet_test::AddGpuTick(&s1, "G1", t, 100.0 * i, 0.5, a);
      fleet_test::AddGpuTick(&s2, "G2", t, 50.0 * i, 0.5, b, "A100");
      for (auto [host, samples] : {std::pair{"h1", &s1}, {"h2", &s2}}) {
        auto r = ledger_.store()->Ingest(
            fleet_test::MakeBatch(host, std::string(host) + "-" + std::to_string(i), i + 1,
                                  std::move(*samples)),
            UnixNanos());
        ASSERT_TRUE(r.ok()) << r.status().ToString();
      }
    }
  }
  json Attribution(const std::string& by, int64_t since_ns, int64_t until_ns,
                   int64_t bucket_s = 0) {
    AttributionQuery q;
    q.by = by;
    q.since_ns = since_ns;
    q.until_ns = until_ns;
    q.bucket_s = bucket_s;
    auto r = ledger_.store()->Read<json>([&](Db& db) { return QueryAttribution(db, q); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : json();
  }
  // The row of `key` (in the bucket starting at `bucket_s`, when given), or an empty object.
  static json Row(const json& a, const std::string& key, int64_t bucket_s = -1) {
    for (const json& r : a["rows"]) {
      if (r["key"] == key && (bucket_s < 0 || r["bucket_start_s"] == bucket_s)) return r;
    }
    return json::object();
  }
  // GPU-seconds of a row: allocated, busy, held idle, idle.
  static void ExpectSeconds(const json& row, double alloc, double busy, double held,
                            double idle = 0) {
    ASSERT_FALSE(row.empty());
    EXPECT_NEAR(row["allocated_gpu_hours"].get<double>() * 3600, alloc, 1e-6) << row.dump();
    EXPECT_NEAR(row["busy_gpu_hours"].get<double>() * 3600, busy, 1e-6) << row.dump();
    EXPECT_NEAR(row["held_idle_gpu_hours"].get<double>() * 3600, held, 1e-6) << row.dump();
    EXPECT_NEAR(row["idle_gpu_hours"].get<double>() * 3600, idle, 1e-6) << row.dump();
  }
  int64_t At(int minutes) const { return t0_ + minutes * kMin; }
  int64_t AtS(int minutes) const { return At(minutes) / kSec; }

  fleet_test::TempLedger ledger_;
  int64_t t0_ = 0;
};

TEST_F(LedgerWindowTest, AWindowAcrossAnHourCountsExactlyItsMinutes) {
  // 19:13-20:13 for T = 19:00: minutes 13 to 72 of A, 30 to 72 of B.
  const json team = Attribution("team", At(13), At(73));
  EXPECT_EQ(team["since_s"], AtS(13));
  EXPECT_EQ(team["until_s"], AtS(73));
  EXPECT_EQ(team["asked_since"], team["since"]);
  EXPECT_TRUE(team["whole_hour_edges"].empty());
  ExpectSeconds(Row(team, "team-a"), 3600, 1200, 1200);
  ExpectSeconds(Row(team, "team-b"), 2580, 1413, 1290);
  // Both GPUs reported 3600 s; jobs held 6180 s of the 7200.
  ExpectSeconds(Row(team, kUnallocatedKey), 0, 0, 0, 1020);
  EXPECT_NEAR(team["totals"]["gpu_hours"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(Row(team, "team-a")["energy_joules"].get<double>(), 2400, 1e-6);
  EXPECT_NEAR(Row(team, "team-b")["energy_joules"].get<double>(), 860, 1e-6);

  const json host = Attribution("host", At(13), At(73));
  ExpectSeconds(Row(host, "h1"), 3600, 1200, 1200);
  ExpectSeconds(Row(host, "h2"), 2580, 1413, 1290, 1020);
  EXPECT_NEAR(Row(host, "h1")["energy_joules"].get<double>(), 6000, 1e-6);  // Device energy.
  const json model = Attribution("gpu_model", At(13), At(73));
  ExpectSeconds(Row(model, "A100"), 2580, 1413, 1290, 1020);

  // The jobs list and the top wasters count the same window.
  auto jobs =
      ledger_.store()->Read<json>([&](Db& db) { return QueryJobs(db, At(13), At(73), 2.0, 10); });
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ((*jobs)["jobs"].size(), 2u) << jobs->dump(2);
  EXPECT_EQ((*jobs)["since_s"], AtS(13));
  EXPECT_EQ((*jobs)["jobs"][0]["job_id"], "A");
  EXPECT_NEAR((*jobs)["jobs"][0]["gpu_hours"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR((*jobs)["jobs"][0]["cost"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR((*jobs)["jobs"][1]["busy_gpu_hours"].get<double>() * 3600, 1413, 1e-6);
  auto wasters = ledger_.store()->Read<json>(
      [&](Db& db) { return QueryTopWasters(db, At(13), At(73), 1.0, 1); });
  ASSERT_TRUE(wasters.ok());
  ASSERT_EQ((*wasters)["jobs"].size(), 1u);
  EXPECT_EQ((*wasters)["jobs"][0]["job_id"], "B");  // 1290 s held idle against A's 1200.
  EXPECT_NEAR((*wasters)["jobs"][0]["held_idle_cost"].get<double>() * 3600, 1290, 1e-6);
}

TEST_F(LedgerWindowTest, AnEdgeInsideAMinuteCountsThatMinuteAndAWindowMayBeInsideOneHour) {
  // 20:05:10 to 20:19:40: minutes 65 to 79.
  const json team = Attribution("team", At(65) + 10 * kSec, At(79) + 40 * kSec);
  EXPECT_EQ(team["since_s"], AtS(65));
  EXPECT_EQ(team["until_s"], AtS(80));
  EXPECT_EQ(team["asked_since"], FormatTimestamp(At(65) + 10 * kSec));
  ExpectSeconds(Row(team, "team-a"), 900, 300, 300);
  ExpectSeconds(Row(team, "team-b"), 900, 180, 450);
  EXPECT_EQ(Row(team, kUnallocatedKey), json::object());
}

TEST_F(LedgerWindowTest, BucketsStartAtSince) {
  // 19:13 to 21:50:30 in 2-hour buckets: [19:13, 21:13) and [21:13, 21:51). The hour 20:00 is
  // read from the rollups, the rest from the minute rows (21:00 is cut by a boundary).
  const json team = Attribution("team", At(13), At(170) + 30 * kSec, 7200);
  EXPECT_EQ(team["bucket_s"], 7200);
  EXPECT_EQ(team["until_s"], AtS(171));
  ExpectSeconds(Row(team, "team-a", AtS(13)), 7200, 2400, 2400);
  ExpectSeconds(Row(team, "team-a", AtS(133)), 1020, 360, 300);
  ExpectSeconds(Row(team, "team-b", AtS(13)), 6180, 3183, 3090);
  ExpectSeconds(Row(team, "team-b", AtS(133)), 2280, 1197, 1140);
  // Wall time 2 x 7200 and 2 x 2280 s.
  ExpectSeconds(Row(team, kUnallocatedKey, AtS(13)), 0, 0, 0, 14400 - 7200 - 6180);
  ExpectSeconds(Row(team, kUnallocatedKey, AtS(133)), 0, 0, 0, 4560 - 1020 - 2280);
  EXPECT_EQ(team["rows"].size(), 6u) << team.dump(2);

  // Hourly buckets off the hour: every hour is cut, every bucket still exact.
  const json hourly = Attribution("team", At(13), At(133), 3600);
  ExpectSeconds(Row(hourly, "team-a", AtS(13)), 3600, 1200, 1200);
  ExpectSeconds(Row(hourly, "team-b", AtS(73)), 3600, 1770, 1800);
}

TEST_F(LedgerWindowTest, AnEdgeWhoseMinutesArePastRetentionCountsItsWholeHour) {
  // Minute rows before minute 100 deleted (the default --retention is 90 days); rollups kept.
  ASSERT_TRUE(ledger_.store()->ApplyRetention(At(100) + 90LL * 86400 * kSec).ok());

  // since 19:13 is widened to 19:00; until 21:53 is still exact.
  const json team = Attribution("team", At(13), At(173));
  EXPECT_EQ(team["since_s"], AtS(0));
  EXPECT_EQ(team["until_s"], AtS(173));
  EXPECT_EQ(team["asked_since"], FormatTimestamp(At(13)));
  EXPECT_EQ(team["whole_hour_edges"], json::array({"since"}));
  ExpectSeconds(Row(team, "team-a"), 9000, 3000, 3000);
  ExpectSeconds(Row(team, "team-b"), 8580, 4483, 4290);

  // Both edges old: 19:00 to 21:00.
  const json old = Attribution("team", At(13), At(95));
  EXPECT_EQ(old["since_s"], AtS(0));
  EXPECT_EQ(old["until_s"], AtS(120));
  EXPECT_EQ(old["whole_hour_edges"], json::array({"since", "until"}));
  ExpectSeconds(Row(old, "team-a"), 7200, 2400, 2400);
  ExpectSeconds(Row(old, "team-b"), 5400, 3105, 2700);
  auto jobs =
      ledger_.store()->Read<json>([&](Db& db) { return QueryJobs(db, At(13), At(95), 0, 10); });
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ((*jobs)["whole_hour_edges"], json::array({"since", "until"}));

  // A window inside the kept minutes is exact.
  const json recent = Attribution("team", At(110), At(130));
  EXPECT_TRUE(recent["whole_hour_edges"].empty());
  ExpectSeconds(Row(recent, "team-a"), 1200, 400, 420);
  ExpectSeconds(Row(recent, "team-b"), 1200, 590, 600);
}

TEST(WindowPlanTest, SplitsAWindowIntoRollupHoursAndMinuteRanges) {
  const int64_t h = 1800000000 - 1800000000 % 3600;  // An hour boundary.
  WindowPlan p = PlanWindow((h + 780) * kSec, (h + 3 * 3600 + 780) * kSec, 0, 0);
  EXPECT_EQ(p.hours_from, h + 3600);
  EXPECT_EQ(p.hours_to, h + 3 * 3600);
  ASSERT_EQ(p.minute_ranges.size(), 2u);
  EXPECT_EQ(p.minute_ranges[0], std::make_pair(h + 780, h + 3600));
  EXPECT_EQ(p.minute_ranges[1], std::make_pair(h + 3 * 3600, h + 3 * 3600 + 780));
  EXPECT_EQ(p.BucketOf("x"), "0");

  // Buckets of 2 h from h+13min: the hours h+2h and h+4h hold a boundary and are read by the
  // minute.
  p = PlanWindow((h + 780) * kSec, (h + 5 * 3600) * kSec, 7200, 0);
  ASSERT_EQ(p.minute_ranges.size(), 3u);
  EXPECT_EQ(p.minute_ranges[1], std::make_pair(h + 2 * 3600, h + 3 * 3600));
  EXPECT_EQ(p.minute_ranges[2], std::make_pair(h + 4 * 3600, h + 5 * 3600));
  EXPECT_EQ(p.BucketOf("x"),
            "(" + std::to_string(h + 780) + "+((x-" + std::to_string(h + 780) + ")/7200)*7200)");
  EXPECT_EQ(p.HourFilter("c"), "c>=" + std::to_string(h + 3600) + " AND c<" +
                                   std::to_string(h + 5 * 3600) + " AND (c-" + std::to_string(h) +
                                   ")%7200<>0");

  // On the hour, nothing is cut and nothing is read by the minute.
  p = PlanWindow(h * kSec, (h + 7200) * kSec, 3600, 0);
  EXPECT_TRUE(p.minute_ranges.empty());
  EXPECT_EQ(p.HourFilter("c"), "c>=" + std::to_string(h) + " AND c<" + std::to_string(h + 7200));

  // An until before since counts nothing.
  p = PlanWindow((h + 600) * kSec, h * kSec, 0, 0);
  EXPECT_TRUE(p.minute_ranges.empty());
  EXPECT_EQ(p.hours_from, p.hours_to);
}

}  // namespace
}  // namespace vigil
