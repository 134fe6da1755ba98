// SPDX-License-Identifier: Apache-2.0
// Group commit of the ledger store: a batch that fails inside a shared transaction rolls back to
// its own savepoint (rows and in-memory differencing state), the others commit; concurrent
// callers queued behind a running commit share the next one.
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_query.h"
#include "fleet/ledger_store.h"
#include "fleet/temp_ledger.h"

namespace vigil {
namespace {

using fleet_test::kSec;
using nlohmann::json;

class LedgerGroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t now_s = UnixNanos() / kSec;
    t0_ = (now_s - now_s % 3600 - 7200) * kSec;
  }
  // Report i (every 10 s) of `host`'s one GPU, held by a job of team-<host>.
  IngestBatch Tick(const std::string& host, int i, std::string id = "") {
    std::vector<IngestSample> s;
    const double t = 10.0 * i;
    fleet_test::AddGpuTick(&s, "GPU-" + host, t0_ + i * 10 * kSec, 100 * t, 0.5,
                           {{.job_id = "job-" + host,
                             .team = "team-" + host,
                             .alloc_s = t,
                             .busy_s = t / 2,
                             .energy_j = 50 * t}});
    if (id.empty()) id = host + "-" + std::to_string(i);
    return fleet_test::MakeBatch(host, id, i, std::move(s));
  }
  // Allocated GPU-seconds by team over the last week.
  std::map<std::string, double> AllocatedSeconds() {
    AttributionQuery q;
    q.by = "team";
    q.until_ns = UnixNanos();
    q.since_ns = q.until_ns - 7 * 86400 * kSec;
    auto r = store_->Read<json>([&](Db& db) { return QueryAttribution(db, q); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::map<std::string, double> out;
    if (!r.ok()) return out;
    for (const json& row : (*r)["rows"]) {
      out[row["key"]] = row["allocated_gpu_hours"].get<double>() * 3600;
    }
    return out;
  }
  // A second connection to the same file, as another process would have.
  std::unique_ptr<Db> OtherConnection() {
    auto db = Db::Open(ledger_.db_path());
    EXPECT_TRUE(db.ok());
    return db.ok() ? std::move(*db) : nullptr;
  }

  fleet_test::TempLedger ledger_;
  LedgerStore* const store_ = ledger_.store();
  int64_t t0_ = 0;
};

TEST_F(LedgerGroupCommitTest, FailedBatchRollsBackToItsSavepointAndTheOthersCommit) {
  for (const char* h : {"a", "b"}) ASSERT_TRUE(store_->Ingest(Tick(h, 0), UnixNanos()).ok());
  // The ledger refuses one batch at its very last write, after its minute rows and series state
  // were written inside the transaction.
  std::unique_ptr<Db> other = OtherConnection();
  ASSERT_TRUE(other
                  ->Exec("CREATE TRIGGER poison BEFORE INSERT ON batches WHEN"
                         " NEW.batch_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END;")
                  .ok());
  const IngestBatch a1 = Tick("a", 1), b1 = Tick("b", 1, "poison"), a2 = Tick("a", 2);
  const int64_t now = UnixNanos();
  const uint64_t commits = store_->group_commits();
  std::vector<StatusOr<IngestResult>> r = store_->IngestGroup({{&a1, now}, {&b1, now}, {&a2, now}});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].ok()) << r[0].status().ToString();
  ASSERT_FALSE(r[1].ok());
  EXPECT_NE(r[1].status().message().find("poisoned"), std::string::npos);
  EXPECT_TRUE(r[2].ok()) << r[2].status().ToString();
  EXPECT_EQ(store_->group_commits(), commits + 1);  // One transaction for the three.

  std::map<std::string, double> alloc = AllocatedSeconds();
  EXPECT_DOUBLE_EQ(alloc["team-a"], 20.0);
  EXPECT_DOUBLE_EQ(alloc["team-b"], 0.0);

  // Nothing of the failed batch stayed: not its idempotency row (the resend is not a duplicate),
  // not its series state (the resend counts its 10 s instead of calling them late).
  ASSERT_TRUE(other->Exec("DROP TRIGGER poison").ok());
  auto again = store_->Ingest(b1, UnixNanos());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->duplicate);
  EXPECT_EQ(again->stats.late, 0u);
  EXPECT_DOUBLE_EQ(AllocatedSeconds()["team-b"], 10.0);
  auto dup = store_->Ingest(a2, UnixNanos());
  ASSERT_TRUE(dup.ok());
  EXPECT_TRUE(dup->duplicate);
}

TEST_F(LedgerGroupCommitTest, BatchesQueuedBehindACommitShareTheNextOne) {
  constexpr int kHosts = 8;
  for (int h = 0; h < kHosts; ++h) {
    ASSERT_TRUE(store_->Ingest(Tick(std::to_string(h), 0), UnixNanos()).ok());
  }
  // Another connection holds the write lock, so the first commit waits (busy timeout) while the
  // other callers queue up behind it.
  std::unique_ptr<Db> other = OtherConnection();
  ASSERT_TRUE(other->Exec("BEGIN IMMEDIATE").ok());
  const uint64_t commits = store_->group_commits();
  std::vector<StatusOr<IngestResult>> results(kHosts, InternalError("not run"));
  std::vector<std::thread> threads;
  for (int h = 0; h < kHosts; ++h) {
    threads.emplace_back([&, h] { results[h] = store_->Ingest(Tick(std::to_string(h), 1), 0); });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (store_->pending() < kHosts && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(store_->pending(), static_cast<size_t>(kHosts));
  ASSERT_TRUE(other->Exec("COMMIT").ok());
  for (std::thread& t : threads) t.join();
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.status().ToString();
  // The caller that found no commit running took what was queued then (at least itself); all
  // the others went in the next transaction.
  EXPECT_LE(store_->group_commits() - commits, 2u);
  std::map<std::string, double> alloc = AllocatedSeconds();
  for (int h = 0; h < kHosts; ++h) EXPECT_DOUBLE_EQ(alloc["team-" + std::to_string(h)], 10.0);
}

TEST_F(LedgerGroupCommitTest, DuplicateInsideOneGroupIsAppliedOnce) {
  ASSERT_TRUE(store_->Ingest(Tick("a", 0), UnixNanos()).ok());
  const IngestBatch a1 = Tick("a", 1);
  auto r = store_->IngestGroup({{&a1, 1}, {&a1, 2}});
  ASSERT_TRUE(r[0].ok() && r[1].ok());
  EXPECT_FALSE(r[0]->duplicate);
  EXPECT_TRUE(r[1]->duplicate);
  EXPECT_DOUBLE_EQ(AllocatedSeconds()["team-a"], 10.0);
}

}  // namespace
}  // namespace vigil
