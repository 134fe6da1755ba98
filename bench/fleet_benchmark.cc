// SPDX-License-Identifier: Apache-2.0
// Fleet ledger: ingest rate (samples/s, targets >= 200,000) for per-tick batches (one host, 8
// GPUs, 56 samples), spool-replay sized batches (5,000 samples) and with JSON parsing included;
// and the attribution query over 1,000 GPUs x 30 days (target < 200 ms), on hourly rollups
// filled in bulk (125 hosts x 8 GPUs, 8-GPU jobs of one day each).
#include <unistd.h>

#include <filesystem>
#include <memory>

#include <benchmark/benchmark.h>

#include "base/time_util.h"
#include "fleet/fleet_test_util.h"
#include "fleet/ledger_query.h"
#include "fleet/ledger_store.h"

namespace vigil {
namespace {

using fleet_test::kSec;

std::unique_ptr<LedgerStore> OpenFresh(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vigil-fleet-bench-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  LedgerOptions o;
  o.path = (dir / "fleet.db").string();
  auto s = LedgerStore::Open(o);
  if (!s.ok()) std::abort();
  return std::move(*s);
}

// `ticks` consecutive reports of one host's 8 GPUs, each held by a job.
IngestBatch HostBatch(int host, int64_t first_tick, int ticks, int64_t t0) {
  std::vector<IngestSample> s;
  for (int64_t k = first_tick; k < first_tick + ticks; ++k) {
    const double t = 10.0 * static_cast<double>(k);
    for (int g = 0; g < 8; ++g) {
      fleet_test::AddGpuTick(&s, "GPU-" + std::to_string(host) + "-" + std::to_string(g),
                             t0 + k * 10 * kSec, 300 * t, 0.6,
                             {{.job_id = "job-" + std::to_string(host),
                               .team = "team-" + std::to_string(host % 7),
                               .alloc_s = t,
                               .busy_s = 0.6 * t,
                               .energy_j = 300 * t}});
    }
  }
  return fleet_test::MakeBatch("host-" + std::to_string(host), "b-" + std::to_string(first_tick),
                               first_tick, std::move(s));
}

void IngestBench(benchmark::State& state, int ticks_per_batch) {
  auto store = OpenFresh("ingest" + std::to_string(ticks_per_batch));
  const int64_t t0 = (UnixNanos() / kSec / 3600 * 3600 - 86400) * kSec;
  int64_t tick = 0;
  int64_t samples = 0;
  for (auto _ : state) {
    state.PauseTiming();
    IngestBatch b = HostBatch(static_cast<int>(tick % 16), tick, ticks_per_batch, t0);
    state.ResumeTiming();
    auto r = store->Ingest(b, UnixNanos());
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    samples += static_cast<int64_t>(b.samples.size());
    tick += ticks_per_batch;
  }
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
}

void BM_IngestTickBatch(benchmark::State& state) { IngestBench(state, 1); }
void BM_IngestLargeBatch(benchmark::State& state) { IngestBench(state, 89); }  // ~5,000.
BENCHMARK(BM_IngestTickBatch)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_IngestLargeBatch)->Unit(benchmark::kMillisecond)->UseRealTime();

// 1,000 GPUs x 30 days in the hourly rollups, written in bulk.
LedgerStore* ThirtyDays() {
  static std::unique_ptr<LedgerStore> store = [] {
    auto s = OpenFresh("query");
    const int64_t now_h = UnixNanos() / kSec / 3600 * 3600;
    const int64_t start = now_h - 30 * 86400;
    Status st =
        s->Read<int>([&](Db& db) -> StatusOr<int> {
           VIGIL_RETURN_IF_ERROR(db.Exec("BEGIN"));
           const std::string hours = "WITH RECURSIVE h(x) AS (SELECT " + std::to_string(start) +
                                     " UNION ALL SELECT x+3600 FROM h WHERE x+3600<" +
                                     std::to_string(now_h) + ")";
           const std::string hosts =
               "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<125) ";
           VIGIL_RETURN_IF_ERROR(
               db.Exec(hosts + "INSERT INTO hosts (host_id, name, first_seen_ns,"
                               " last_seen_ns, last_sample_ns) SELECT i, 'host-'||i, 0, 0, 0"
                               " FROM n"));
           // One job per host per day: 125 x 30 = 3,750 jobs, 8 GPUs each.
           VIGIL_RETURN_IF_ERROR(
               db.Exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<3749) "
                       "INSERT INTO jobs SELECT i+1, 'job-'||i, 'user-'||(i%97), 'team-'||(i%13),"
                       " 'model-'||(i%29), 'pytorch', 'slurm', 0, 0 FROM n"));
           VIGIL_RETURN_IF_ERROR(
               db.Exec(hours +
                       ", n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<125) "
                       "INSERT INTO job_hour SELECT x, ((x-" +
                       std::to_string(start) +
                       ")/86400)*125 + i, 8*3300.0, 8*2000.0, 8*300.0, 8*3300.0*400 FROM h, n"));
           VIGIL_RETURN_IF_ERROR(db.Exec(
               hours +
               ", n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<125) "
               "INSERT INTO host_hour SELECT x, i, 'H100', 8*3600.0, 8*3300.0, 8*2000.0, 8*300.0,"
               " 8*3600.0*400, 8*60*0.6, 8*60 FROM h, n"));
           VIGIL_RETURN_IF_ERROR(db.Exec("COMMIT; ANALYZE;"));
           return 0;
         }).status();
    if (!st.ok()) {
      std::fprintf(stderr, "fill failed: %s\n", st.ToString().c_str());
      std::abort();
    }
    return s;
  }();
  return store.get();
}

void BM_Attribution30Days(benchmark::State& state, const char* by, int64_t bucket_s) {
  LedgerStore* store = ThirtyDays();
  AttributionQuery q;
  q.by = by;
  q.until_ns = UnixNanos();
  q.since_ns = q.until_ns - 30 * 86400 * kSec;
  q.bucket_s = bucket_s;
  q.price_per_gpu_hour = 2;
  double gpu_hours = 0;
  for (auto _ : state) {
    auto r = store->Read<nlohmann::json>([&](Db& db) { return QueryAttribution(db, q); });
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
    gpu_hours = (*r)["totals"]["gpu_hours"].get<double>();
  }
  state.counters["gpu_hours"] = gpu_hours;  // 1,000 GPUs x 720 h = 720,000.
}
BENCHMARK_CAPTURE(BM_Attribution30Days, by_team, "team", 0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Attribution30Days, by_user_daily, "user", 86400)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Attribution30Days, by_host, "host", 0)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
