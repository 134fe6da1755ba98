// SPDX-License-Identifier: Apache-2.0
// The per-host limits of the ledger (ledger_limits.h): one host inventing series or oversized
// labels is refused whole, nothing of its batch stored, while its other batches, other hosts and
// a large real host at the default limits go through.
#include "fleet/ledger_limits.h"

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_store.h"

namespace vigil {
namespace {

using fleet_test::AddGpuTick;
using fleet_test::JobCounters;
using fleet_test::kSec;
using fleet_test::MakeBatch;
using fleet_test::S;

class LedgerLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil-limits-XXXXXX";
    dir_ = mkdtemp(tmpl);
    t0_ = (UnixNanos() / kSec / 60 - 60) * 60 * kSec;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open(LedgerLimits limits) {
    LedgerOptions o;
    o.path = dir_ + "/fleet.db";
    o.limits = limits;
    auto s = LedgerStore::Open(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  // One tick of `host`: one GPU with `jobs` jobs named PREFIX-0.. (6 series + 4 per job).
  IngestBatch Tick(const std::string& host, int seq, int jobs, const std::string& prefix = "job") {
    std::vector<IngestSample> s;
    std::vector<JobCounters> j;
    for (int i = 0; i < jobs; ++i) {
      j.push_back({.job_id = prefix + "-" + std::to_string(i), .alloc_s = 10.0 * seq});
    }
    AddGpuTick(&s, "GPU-" + host, t0_ + seq * 10 * kSec, seq, 0.5, j);
    return MakeBatch(host, host + "-" + std::to_string(seq), seq, std::move(s));
  }
  // Rows of the jobs inventory (what a flood of made-up series would grow).
  int64_t Jobs() {
    auto n = store_->Read<int64_t>([](Db& db) -> StatusOr<int64_t> {
      VIGIL_ASSIGN_OR_RETURN(Stmt st, db.Prepare("SELECT count(*) FROM jobs"));
      VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
      return row ? st.Int(0) : 0;
    });
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : -1;
  }

  std::string dir_;
  int64_t t0_ = 0;
  std::unique_ptr<LedgerStore> store_;
};

TEST_F(LedgerLimitsTest, AHostInventingSeriesIsRefusedWholeAndKeepsItsOwn) {
  LedgerLimits limits;
  limits.max_series_per_host = 50;
  Open(limits);
  // A real host's 10 jobs: 2 + 40 series.
  auto own = store_->Ingest(Tick("node-a", 1, 10), UnixNanos());
  ASSERT_TRUE(own.ok() && !own->refused) << own.status().ToString();
  ASSERT_EQ(Jobs(), 10);

  // The attack: the same token pushing 1000 made-up jobs (4000 series) in one batch.
  auto flood = store_->Ingest(Tick("node-a", 2, 1000, "fake"), UnixNanos());
  ASSERT_TRUE(flood.ok()) << flood.status().ToString();
  ASSERT_TRUE(flood->refused);
  EXPECT_EQ(flood->refused->limit, "max-series-per-host");
  EXPECT_NE(flood->refused->message.find("--max-series-per-host=50"), std::string::npos)
      << flood->refused->message;
  EXPECT_EQ(store_->limit_refusals(), 1u);
  EXPECT_EQ(Jobs(), 10);  // None of the made-up jobs, no partial batch.
  EXPECT_EQ(store_->series_in_memory(), 42u);
  // Nor is the refused batch remembered: a resend is refused again, not taken as a duplicate.
  auto again = store_->Ingest(Tick("node-a", 2, 1000, "fake"), UnixNanos());
  ASSERT_TRUE(again.ok() && again->refused && !again->duplicate);

  // Its own series go on being accounted; a batch that adds up to the limit is taken; another
  // host has a limit of its own.
  auto next = store_->Ingest(Tick("node-a", 3, 10), UnixNanos());
  ASSERT_TRUE(next.ok() && !next->refused);
  EXPECT_GT(next->stats.used, 0u);
  auto up_to = store_->Ingest(Tick("node-a", 4, 12), UnixNanos());  // 42 held + 8 new = 50.
  ASSERT_TRUE(up_to.ok() && !up_to->refused) << (up_to->refused ? up_to->refused->message : "");
  auto over = store_->Ingest(Tick("node-a", 5, 13), UnixNanos());
  ASSERT_TRUE(over.ok() && over->refused);
  auto other = store_->Ingest(Tick("node-b", 1, 12, "b"), UnixNanos());
  ASSERT_TRUE(other.ok() && !other->refused);

  // The count survives a restart (series are reloaded from the file).
  store_.reset();
  Open(limits);
  auto after = store_->Ingest(Tick("node-a", 6, 13), UnixNanos());
  ASSERT_TRUE(after.ok() && after->refused);
  // And comes down once the host's series are silent for the idempotency window.
  ASSERT_TRUE(store_->ApplyRetention(UnixNanos() + 8LL * 86400 * kSec).ok());
  auto fresh = store_->Ingest(Tick("node-a", 7, 12, "new"), UnixNanos());
  ASSERT_TRUE(fresh.ok() && !fresh->refused);
}

TEST_F(LedgerLimitsTest, OversizedLabelsAreRefusedNamingTheLimit) {
  Open(LedgerLimits{});
  struct Case {
    Labels labels;
    const char* limit;
  };
  Labels many = {{"gpu_uuid", "GPU-x"}};
  for (int i = 0; i < 40; ++i) many.emplace_back("l" + std::to_string(i), "v");
  Labels wide = {{"gpu_uuid", "GPU-x"}};
  for (int i = 0; i < 10; ++i) wide.emplace_back("l" + std::to_string(i), std::string(600, 'v'));
  const std::vector<Case> cases = {
      {many, "max-labels-per-series"},
      {{{"gpu_uuid", "GPU-x"}, {std::string(200, 'n'), "v"}}, "max-label-name-bytes"},
      {{{"gpu_uuid", "GPU-x"}, {"job_id", std::string(2000, 'j')}}, "max-label-value-bytes"},
      {wide, "max-label-bytes-per-series"}};
  int seq = 0;
  for (const Case& c : cases) {
    std::vector<IngestSample> s;
    AddGpuTick(&s, "GPU-a", t0_, 0, 0.5, {{.job_id = "ok"}});
    s.push_back(S("vigil_gpu_allocated_seconds_total", true, c.labels, 1, t0_));
    ++seq;
    auto r = store_->Ingest(MakeBatch("node-a", "b" + std::to_string(seq), seq, s), UnixNanos());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->refused) << c.limit;
    EXPECT_EQ(r->refused->limit, c.limit);
    EXPECT_NE(r->refused->message.find(std::string("--") + c.limit + "="), std::string::npos)
        << r->refused->message;
  }
  EXPECT_EQ(Jobs(), 0);  // The good samples of those batches were not stored either.
  EXPECT_EQ(store_->limit_refusals(), cases.size());
}

// 8 GPUs, each with 300 metrics of a dozen labels and 40 jobs a week: far under every default.
TEST_F(LedgerLimitsTest, ALargeRealHostIsWellWithinTheDefaults) {
  Open(LedgerLimits{});
  for (int tick = 1; tick <= 2; ++tick) {
    std::vector<IngestSample> s;
    for (int g = 0; g < 8; ++g) {
      const std::string uuid = "GPU-3f2a9c1e-8d4b-4c6a-9e1f-00000000000" + std::to_string(g);
      std::vector<JobCounters> jobs;
      for (int j = 0; j < 40; ++j) {
        jobs.push_back({.job_id = "slurm-" + std::to_string(1000000 + g * 100 + j),
                        .team = "research-foundation-models",
                        .model = "llama-3-70b-instruct-finetune",
                        .user = "a.long.user.name",
                        .alloc_s = 10.0 * tick});
      }
      AddGpuTick(&s, uuid, t0_ + tick * 10 * kSec, tick, 0.5, jobs);
      for (int m = 0; m < 300; ++m) {
        s.push_back(S("vigil_gpu_metric_" + std::to_string(m), false,
                      {{"gpu_uuid", uuid},
                       {"gpu_model", "NVIDIA H100 80GB HBM3"},
                       {"gpu_index", std::to_string(g)},
                       {"host", "gpu-node-0042.cluster.example.org"},
                       {"driver_version", "550.54.15"},
                       {"numa_node", "0"},
                       {"pci_bus_id", "00000000:18:00.0"},
                       {"mig_profile", ""},
                       {"sensor", "gpu"},
                       {"cluster", "us-east-2a"},
                       {"rack", "r17"},
                       {"pool", "training"}},
                      m, t0_ + tick * 10 * kSec));
      }
    }
    auto r = store_->Ingest(MakeBatch("gpu-node-0042", "t" + std::to_string(tick), tick, s),
                            UnixNanos());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_FALSE(r->refused) << r->refused->message;
  }
  EXPECT_EQ(Jobs(), 320);
  EXPECT_EQ(store_->limit_refusals(), 0u);
}

}  // namespace
}  // namespace vigil
