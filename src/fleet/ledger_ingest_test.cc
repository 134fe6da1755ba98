// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_ingest.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "fleet/fleet_test_util.h"

namespace vigil {
namespace {

using fleet_test::AddGpuTick;
using fleet_test::JobCounters;
using fleet_test::kSec;

constexpr int64_t kT0 = 1764410940LL * kSec;  // A minute boundary.

class FakeIds : public LedgerIds {
 public:
  int64_t GpuId(std::string_view uuid, std::string_view, int64_t) override {
    return gpus.try_emplace(std::string(uuid), static_cast<int64_t>(gpus.size()) + 1).first->second;
  }
  int64_t JobKey(const JobIdent& job, int64_t, int64_t) override {
    return jobs.try_emplace(job.job_id, static_cast<int64_t>(jobs.size()) + 1).first->second;
  }
  // The host reported the job: in an earlier batch (`reported`) or by a counter (JobKey).
  bool JobOnHost(std::string_view job_id) override {
    const std::string id(job_id);
    return reported.count(id) != 0 || jobs.count(id) != 0;
  }
  std::map<std::string, int64_t> gpus, jobs;
  std::set<std::string> reported;
};

struct Harness {
  LedgerIngestor ingestor;
  FakeIds ids;
  LedgerCells cells;
  IngestStats stats;
  int seq = 0;
  void Push(std::vector<IngestSample> samples) {
    ++seq;
    ingestor.Ingest(fleet_test::MakeBatch("h1", "b" + std::to_string(seq), seq, samples), ids,
                    &cells, &stats);
    ingestor.Commit();
  }
  LedgerCell Minute(int64_t minute_s, int64_t job_key, int64_t gpu = 1) {
    auto it = cells.find({minute_s, gpu, job_key});
    return it == cells.end() ? LedgerCell{} : it->second;
  }
  double Sum(double LedgerCell::*f, int64_t job_key) {
    double s = 0;
    for (const auto& [k, c] : cells) {
      if (k.job_key == job_key) s += c.*f;
    }
    return s;
  }
};

TEST(LedgerIngestTest, SpreadSplitsByTimeAndAddsUpExactly) {
  LedgerCells cells;
  // 90 s from 30 s before a minute boundary: 1/3 then 2/3.
  LedgerIngestor::Spread(&cells, 1, 2, &LedgerCell::alloc_s, kT0 - 30 * kSec, kT0 + 60 * kSec, 0.3);
  ASSERT_EQ(cells.size(), 2u);
  const double a = cells[{kT0 / kSec - 60, 1, 2}].alloc_s;
  const double b = cells[{kT0 / kSec, 1, 2}].alloc_s;
  EXPECT_NEAR(a, 0.1, 1e-15);
  EXPECT_EQ(a + b, 0.3);  // The remainder goes to the last part.
}

TEST(LedgerIngestTest, AllocatedPlusIdleIsWallTimeWithJobBoundariesInsideAMinute) {
  Harness h;
  // Reports every 10 s; job A holds the GPU for (0,30], nothing for (30,40], job B for (40,60].
  const double alloc_a[] = {0, 10, 20, 30};
  for (int i = 0; i <= 6; ++i) {
    std::vector<IngestSample> s;
    std::vector<JobCounters> jobs;
    if (i >= 1 && i <= 3) jobs.push_back({.job_id = "A", .alloc_s = alloc_a[i], .busy_s = 5.0 * i});
    if (i >= 5) jobs.push_back({.job_id = "B", .team = "team-b", .alloc_s = 10.0 * (i - 4)});
    AddGpuTick(&s, "G1", kT0 + i * 10 * kSec, 100.0 * i, 0.5, jobs);
    h.Push(s);
  }
  const int64_t m = kT0 / kSec;
  const LedgerCell gpu = h.Minute(m, 0);
  const LedgerCell a = h.Minute(m, h.ids.jobs["A"]);
  const LedgerCell b = h.Minute(m, h.ids.jobs["B"]);
  EXPECT_EQ(gpu.wall_s, 60.0);
  EXPECT_DOUBLE_EQ(a.alloc_s, 30.0);
  EXPECT_DOUBLE_EQ(a.busy_s, 15.0);
  EXPECT_DOUBLE_EQ(b.alloc_s, 20.0);
  const double idle = gpu.wall_s - a.alloc_s - b.alloc_s;
  EXPECT_DOUBLE_EQ(idle, 10.0);
  EXPECT_DOUBLE_EQ(gpu.energy_j, 600.0);
  EXPECT_EQ(gpu.sm_n, 6);  // The report at +60 s belongs to the next minute.
}

TEST(LedgerIngestTest, CounterResetCountsTheNewValueAsTheIncrease) {
  Harness h;
  double alloc[] = {100, 110, 120, 5, 15};  // The daemon restarted before the 4th report.
  for (int i = 0; i < 5; ++i) {
    std::vector<IngestSample> s;
    AddGpuTick(&s, "G1", kT0 + i * 10 * kSec, 0, 0, {{.job_id = "A", .alloc_s = alloc[i]}});
    h.Push(s);
  }
  EXPECT_EQ(h.stats.resets, 1u);
  // First report is a baseline (the GPU was new); then +10, +10, +5 (reset), +10.
  EXPECT_DOUBLE_EQ(h.Sum(&LedgerCell::alloc_s, h.ids.jobs["A"]), 35.0);
  EXPECT_DOUBLE_EQ(h.Sum(&LedgerCell::wall_s, 0), 40.0);
}

TEST(LedgerIngestTest, OutOfOrderAndRepeatedReportsGiveTheSameTotals) {
  std::vector<std::vector<IngestSample>> ticks;
  for (int i = 0; i <= 12; ++i) {
    std::vector<IngestSample> s;
    AddGpuTick(&s, "G1", kT0 + i * 10 * kSec, 50.0 * i, 1,
               {{.job_id = "A", .alloc_s = 10.0 * i, .energy_j = 40.0 * i}});
    ticks.push_back(s);
  }
  Harness in_order;
  for (const auto& t : ticks) in_order.Push(t);
  Harness shuffled;
  for (int i : {0, 3, 1, 2, 2, 7, 5, 4, 6, 12, 8, 9, 11, 10, 12, 0}) shuffled.Push(ticks[i]);
  const int64_t job = in_order.ids.jobs["A"];
  for (auto f : {&LedgerCell::wall_s, &LedgerCell::alloc_s, &LedgerCell::energy_j}) {
    EXPECT_DOUBLE_EQ(in_order.Sum(f, job) + in_order.Sum(f, 0),
                     shuffled.Sum(f, job) + shuffled.Sum(f, 0));
  }
  EXPECT_DOUBLE_EQ(shuffled.Sum(&LedgerCell::alloc_s, job), 120.0);
  EXPECT_DOUBLE_EQ(shuffled.Sum(&LedgerCell::wall_s, 0), 120.0);
  EXPECT_GT(shuffled.stats.late, 0u);
}

TEST(LedgerIngestTest, LongSilenceCountsOnlyOneReportInterval) {
  Harness h;
  for (int64_t t : {0, 10, 20, 3600, 3610}) {
    std::vector<IngestSample> s;
    AddGpuTick(&s, "G1", kT0 + t * kSec, 0, 0, {});
    h.Push(s);
  }
  EXPECT_DOUBLE_EQ(h.Sum(&LedgerCell::wall_s, 0), 40.0);  // 20 + 10 (clipped gap) + 10.
}

TEST(LedgerIngestTest, RollbackRestoresTheDifferencingState) {
  Harness h;
  std::vector<IngestSample> s;
  AddGpuTick(&s, "G1", kT0, 0, 0, {});
  h.Push(s);
  std::vector<IngestSample> s2;
  AddGpuTick(&s2, "G1", kT0 + 10 * kSec, 0, 0, {});
  h.ingestor.Ingest(fleet_test::MakeBatch("h1", "x", 9, s2), h.ids, &h.cells, &h.stats);
  h.ingestor.Rollback();
  h.cells.clear();
  h.Push(s2);  // Applied again after the rollback: counted once.
  EXPECT_DOUBLE_EQ(h.Sum(&LedgerCell::wall_s, 0), 10.0);
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(LedgerIngestTest, JobGaugesAreSummedPerJobIdAndMinute) {
  Harness h;
  h.ids.reported = {"J"};
  const Labels job = {{"job_id", "J"}, {"team", "t"}};
  std::vector<IngestSample> s = {
      fleet_test::S("vigil_job_mfu_ratio", false, job, 0.25, kT0 + 10 * kSec),
      fleet_test::S("vigil_job_mfu_ratio", false, job, 0.75, kT0 + 20 * kSec),
      fleet_test::S("vigil_job_mfu_ratio", false, job, 0.5, kT0 + 70 * kSec),  // Next minute.
      fleet_test::S("vigil_job_step_seconds", false, job, 1.5, kT0 + 10 * kSec),
      fleet_test::S("vigil_job_model_flops", false, job, 3e12, kT0 + 10 * kSec),
      fleet_test::S("vigil_job_device_seconds_per_input_byte", false, job, 1e-9, kT0),
      // Ignored: no job id, a negative value, a gauge that is not the client's.
      fleet_test::S("vigil_job_mfu_ratio", false, {{"team", "t"}}, 0.9, kT0),
      fleet_test::S("vigil_job_mfu_ratio", false, job, -1, kT0),
      fleet_test::S("vigil_job_device_seconds_per_input_byte", false, job, -1e-9, kT0),
      fleet_test::S("vigil_job_gpu_count", false, job, 8, kT0)};
  h.Push(s);
  EXPECT_EQ(h.stats.used, 6u);
  const JobMetricCells cells = h.ingestor.TakeJobMetrics();
  ASSERT_EQ(cells.size(), 2u);
  const JobMetricCell& first = cells.at({kT0 / kSec, "J"});
  EXPECT_DOUBLE_EQ(first.mfu_sum, 1.0);
  EXPECT_EQ(first.mfu_n, 2);
  EXPECT_DOUBLE_EQ(first.dspib_sum, 1e-9);
  EXPECT_EQ(first.dspib_n, 1);
  EXPECT_DOUBLE_EQ(first.step_s_sum, 1.5);
  EXPECT_EQ(first.step_n, 1);
  EXPECT_DOUBLE_EQ(first.flops_sum, 3e12);
  EXPECT_EQ(cells.at({kT0 / kSec + 60, "J"}).mfu_n, 1);
  EXPECT_TRUE(h.ingestor.TakeJobMetrics().empty());
  // The next batch starts afresh: nothing of the previous one is carried over.
  h.Push({fleet_test::S("vigil_job_mfu_ratio", false, job, 0.1, kT0 + 130 * kSec)});
  EXPECT_EQ(h.ingestor.TakeJobMetrics().size(), 1u);
}

// A host's token pushing MFU for a job of another host: dropped and counted, while the gauges of
// a job the same batch reports (its counters after the gauge) count.
TEST(LedgerIngestTest, JobGaugesOfAJobTheHostNeverReportedAreDropped) {
  Harness h;
  std::vector<IngestSample> s = {
      fleet_test::S("vigil_job_mfu_ratio", false, {{"job_id", "victim"}}, 1e300, kT0),
      fleet_test::S("vigil_job_mfu_ratio", false, {{"job_id", "own"}}, 0.4, kT0)};
  AddGpuTick(&s, "G1", kT0, 0, 0.5, {{.job_id = "own", .alloc_s = 1}});
  h.Push(s);
  EXPECT_EQ(h.stats.foreign, 1u);
  const JobMetricCells cells = h.ingestor.TakeJobMetrics();
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells.begin()->first.second, "own");
  EXPECT_DOUBLE_EQ(cells.begin()->second.mfu_sum, 0.4);
}

// The per-host series count the limit is checked on: what a batch would add, what is held, and
// both back where they were after a rollback or once the series are forgotten.
TEST(LedgerIngestTest, SeriesAreCountedPerHost) {
  Harness h;
  std::vector<IngestSample> s;
  AddGpuTick(&s, "G1", kT0, 0, 0.5, {{.job_id = "a"}, {.job_id = "b"}});
  // Not kept by the ledger: no series, no GPU row.
  s.push_back(fleet_test::S("vigil_gpu_process_memory_bytes", false,
                            {{"gpu_uuid", "G-unused"}, {"job_id", "a"}, {"pid", "7"}}, 1, kT0));
  const IngestBatch batch = fleet_test::MakeBatch("h1", "b1", 1, s);
  // A heartbeat, the device's energy and 4 counters for each of 2 jobs.
  EXPECT_EQ(h.ingestor.NewSeries(batch), 10u);
  h.Push(s);
  EXPECT_EQ(h.ingestor.series_of_host("h1"), 10u);
  EXPECT_EQ(h.ingestor.series_of_host("h2"), 0u);
  EXPECT_EQ(h.ids.gpus.count("G-unused"), 0u);
  EXPECT_EQ(h.ingestor.NewSeries(batch), 0u);  // Already held.

  std::vector<IngestSample> more;
  AddGpuTick(&more, "G2", kT0 + 10 * kSec, 0, 0.5, {{.job_id = "c"}});
  const IngestBatch next = fleet_test::MakeBatch("h1", "b2", 2, more);
  EXPECT_EQ(h.ingestor.NewSeries(next), 6u);
  IngestStats stats;
  h.ingestor.Ingest(next, h.ids, &h.cells, &stats);
  EXPECT_EQ(h.ingestor.series_of_host("h1"), 16u);
  h.ingestor.Rollback();
  EXPECT_EQ(h.ingestor.series_of_host("h1"), 10u);
  EXPECT_EQ(h.ingestor.ForgetBefore(kT0 + kSec), 10u);
  EXPECT_EQ(h.ingestor.series_of_host("h1"), 0u);
}

}  // namespace
}  // namespace vigil
