// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_triggers.h"

#include <atomic>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "fleet/profiling_test_util.h"

namespace vigil {
namespace {

using fleet_test::kSec;
using fleet_test::kT0;
using fleet_test::SimJob;

// 41 minutes of reports: two jobs steady and low, one busy, one low on average but jumping, one
// low but only 11 minutes old.
const std::vector<SimJob> kJobs = {
    {"low", "h1", "GPU-1", 0, {0.2}},          {"busy", "h1", "GPU-2", 0, {0.8}},
    {"jumpy", "h2", "GPU-3", 0, {0.05, 0.45}}, {"young", "h2", "GPU-4", 30, {0.1}},
    {"low2", "h2", "GPU-5", 0, {0.1}},
};
constexpr int64_t kNow = kT0 + 41 * 60 * kSec + 30 * kSec;

class ProfilingTriggersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Port 1 refuses at once: the requests fail to start, which the triggers do not care about.
    ledger_.Push(kJobs, 41, {{"h1", "127.0.0.1:1"}, {"h2", "127.0.0.1:1"}});
    ProfilingOptions o;
    o.trace_dir = ledger_.dir() + "/traces";
    o.clock = [this] { return now_.load(); };
    o.rpc_deadline_ns = kSec;
    auto s = ProfilingService::Create(o, ledger_.store());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    service_ = std::move(*s);
  }

  ProfilingTriggers Triggers(int64_t budget) {
    ProfilingTriggerOptions t;
    t.max_per_hour = budget;
    return ProfilingTriggers(t, ledger_.store(), service_.get());
  }

  int64_t DecisionRows() {
    auto rows = ledger_.store()->Read<nlohmann::json>(
        [](Db& db) { return QueryProfilingDecisions(db, 1000); });
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? static_cast<int64_t>((*rows)["decisions"].size()) : -1;
  }

  fleet_test::LedgerFixture ledger_;
  std::atomic<int64_t> now_{kNow};
  std::unique_ptr<ProfilingService> service_;
};

TEST_F(ProfilingTriggersTest, ReadsMeanAndSteadinessOfEachJobOverTheWindow) {
  auto jobs = ledger_.store()->Read<std::vector<JobUtilisation>>(
      [](Db& db) { return ReadJobUtilisation(db, kNow, 30 * 60 * kSec); });
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::map<std::string, JobUtilisation> by_id;
  for (const JobUtilisation& u : *jobs) by_id[u.job_id] = u;
  ASSERT_EQ(by_id.size(), 5u);
  EXPECT_NEAR(by_id["low"].mean_ratio, 0.2, 1e-6);
  EXPECT_LT(by_id["low"].stddev_ratio, 1e-6);
  EXPECT_NEAR(by_id["busy"].mean_ratio, 0.8, 1e-6);
  EXPECT_NEAR(by_id["jumpy"].mean_ratio, 0.25, 0.02);
  EXPECT_NEAR(by_id["jumpy"].stddev_ratio, 0.2, 0.02);
  EXPECT_GE(by_id["low"].minutes, 29);
  EXPECT_EQ(by_id["young"].first_seen_ns, kT0 + 30 * 60 * kSec);
}

TEST_F(ProfilingTriggersTest, FiresOncePerSteadyLowJobAndNeverForBusyJumpyOrYoungOnes) {
  ProfilingTriggers triggers = Triggers(4);
  auto decisions = triggers.Check(kNow);
  ASSERT_TRUE(decisions.ok()) << decisions.status().ToString();
  std::map<std::string, ProfilingDecision> by_job;
  for (const ProfilingDecision& d : *decisions) by_job[d.job_id] = d;
  ASSERT_EQ(by_job.size(), 2u);
  EXPECT_EQ(by_job["low"].decision, "fired");
  EXPECT_EQ(by_job["low"].reason, "low_utilization: busy 20% over 30 min");
  EXPECT_FALSE(by_job["low"].request_id.empty());
  EXPECT_EQ(by_job["low2"].decision, "fired");
  EXPECT_EQ(by_job["low2"].reason, "low_utilization: busy 10% over 30 min");

  auto request = service_->Get(by_job["low"].request_id);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->trigger, "auto");
  EXPECT_EQ(request->reason, "low_utilization: busy 20% over 30 min");

  now_ += 60 * kSec;
  auto again = triggers.Check(now_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());  // Once per job.
  EXPECT_EQ(DecisionRows(), 2);
}

TEST_F(ProfilingTriggersTest, BudgetSkipsAreRecordedWithTheirReasonOnceAnHour) {
  ProfilingTriggers triggers = Triggers(1);
  auto decisions = triggers.Check(kNow);
  ASSERT_TRUE(decisions.ok()) << decisions.status().ToString();
  ASSERT_EQ(decisions->size(), 2u);
  EXPECT_EQ((*decisions)[0].job_id, "low");
  EXPECT_EQ((*decisions)[0].decision, "fired");
  EXPECT_EQ((*decisions)[1].job_id, "low2");
  EXPECT_EQ((*decisions)[1].decision, "skipped");
  EXPECT_EQ((*decisions)[1].reason,
            "budget: 1 automatic requests in the last hour (max 1); low_utilization: busy 10% "
            "over 30 min");
  EXPECT_TRUE((*decisions)[1].request_id.empty());

  now_ += 60 * kSec;
  auto again = triggers.Check(now_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(DecisionRows(), 2);
  EXPECT_EQ(service_->CountAuto(kNow - 3600 * kSec), 1);
}

TEST_F(ProfilingTriggersTest, AJobThatStoppedReportingIsNotACandidate) {
  ProfilingTriggers triggers = Triggers(4);
  now_ = kNow + 10 * 60 * kSec;
  auto decisions = triggers.Check(now_);
  ASSERT_TRUE(decisions.ok());
  EXPECT_TRUE(decisions->empty());
}

}  // namespace
}  // namespace vigil
