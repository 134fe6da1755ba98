// SPDX-License-Identifier: Apache-2.0
// Fleet ledger: ingest rate (samples/s, target >= 200,000) for per-tick batches (one host, 8
// GPUs, 56 samples) from one caller, from many concurrent callers (group commit) and over HTTP
// from many simulated daemons (gzip JSON through vigil-fleet's server: parse + ledger), and for
// spool-replay sized batches (5,000 samples); and the attribution query over 1,000 GPUs x 30 days
// (target < 200 ms), on hourly rollups filled in bulk (125 hosts x 8 GPUs, 8-GPU jobs of a day).
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <filesystem>
#include <memory>
#include <thread>

#include <benchmark/benchmark.h>
#include <httplib.h>

#include "base/gzip.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "fleet/fleet_server.h"
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

// `hosts` simulated daemons x `ticks` reports each, in report order.
std::vector<IngestBatch> Fleet(int hosts, int ticks, int64_t t0) {
  std::vector<IngestBatch> out;
  for (int k = 0; k < ticks; ++k) {
    for (int h = 0; h < hosts; ++h) out.push_back(HostBatch(h, k, 1, t0));
  }
  return out;
}

void Report(benchmark::State& state, LedgerStore& store, int64_t samples) {
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
  state.counters["batches_per_commit"] =
      static_cast<double>(store.grouped_batches()) /
      static_cast<double>(std::max<uint64_t>(1, store.group_commits()));
}

// Per-tick batches from `callers` threads at once (each thread its own hosts, in order): the
// ledger's group commit shares transactions between them.
void BM_IngestTickBatchConcurrent(benchmark::State& state) {
  const int callers = static_cast<int>(state.range(0));
  auto store = OpenFresh("concurrent" + std::to_string(callers));
  const std::vector<IngestBatch> batches =
      Fleet(64, 50, (UnixNanos() / kSec / 3600 * 3600 - 86400) * kSec);
  int64_t samples = 0;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    std::atomic<bool> failed{false};
    for (int c = 0; c < callers; ++c) {
      threads.emplace_back([&, c] {
        for (size_t i = 0; i < batches.size(); ++i) {
          if (static_cast<int>(i % 64) % callers != c) continue;
          if (!store->Ingest(batches[i], UnixNanos()).ok()) failed = true;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    if (failed) state.SkipWithError("ingest failed");
    for (const IngestBatch& b : batches) samples += static_cast<int64_t>(b.samples.size());
  }
  Report(state, *store, samples);
}
BENCHMARK(BM_IngestTickBatchConcurrent)
    ->Arg(8)
    ->Arg(32)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The push format as vigild's fleet sink writes it, gzipped.
std::string Payload(const IngestBatch& b) {
  std::string out = "{\"host\":";
  AppendJsonString(b.host, &out);
  out += ",\"batch_id\":";
  AppendJsonString(b.batch_id, &out);
  out += ",\"seq\":" + std::to_string(b.seq) + ",\"samples\":[";
  char num[64];
  for (size_t i = 0; i < b.samples.size(); ++i) {
    const IngestSample& s = b.samples[i];
    out += i ? ",{\"name\":" : "{\"name\":";
    AppendJsonString(s.name, &out);
    out += s.counter ? ",\"kind\":\"counter\",\"labels\":{" : ",\"kind\":\"gauge\",\"labels\":{";
    for (size_t j = 0; j < s.labels.size(); ++j) {
      if (j) out.push_back(',');
      AppendJsonString(s.labels[j].first, &out);
      out.push_back(':');
      AppendJsonString(s.labels[j].second, &out);
    }
    out += "},\"value\":";
    out.append(num, std::to_chars(num, num + sizeof(num), s.value).ptr);
    out += ",\"time_ns\":" + std::to_string(s.time_ns) + "}";
  }
  out += "]}";
  return Gzip(out);
}

// What the HTTP handler does before the ledger: gunzip and parse one daemon's tick.
void BM_ParseTickBatch(benchmark::State& state) {
  const std::string payload = Payload(HostBatch(1, 0, 1, UnixNanos()));
  int64_t samples = 0;
  for (auto _ : state) {
    StatusOr<std::string> body = Gunzip(payload, 64 << 20);
    StatusOr<IngestBatch> batch = ParseIngestBatch(*body);
    if (!batch.ok()) state.SkipWithError(batch.status().ToString().c_str());
    samples += static_cast<int64_t>(batch->samples.size());
  }
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseTickBatch)->Unit(benchmark::kMicrosecond);

// End to end: `connections` clients POST one daemon's tick each (gzip JSON) to vigil-fleet's HTTP
// server, which parses, authorises and ingests; a reply 200 means committed.
void BM_IngestHttp(benchmark::State& state) {
  const int connections = static_cast<int>(state.range(0));
  auto store = OpenFresh("http" + std::to_string(connections));
  FleetServerOptions o;
  o.port = 0;
  FleetServer server(o, store.get());
  if (!server.Start().ok()) {
    state.SkipWithError("server did not start");
    return;
  }
  const std::vector<IngestBatch> batches =
      Fleet(64, 50, (UnixNanos() / kSec / 3600 * 3600 - 86400) * kSec);
  std::vector<std::string> payloads;
  int64_t batch_samples = 0;
  for (const IngestBatch& b : batches) {
    payloads.push_back(Payload(b));
    batch_samples += static_cast<int64_t>(b.samples.size());
  }
  int64_t samples = 0;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    std::atomic<int> failed{0};
    for (int c = 0; c < connections; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", server.port());
        client.set_keep_alive(true);
        client.set_tcp_nodelay(true);
        const httplib::Headers headers = {{"Content-Encoding", "gzip"}};
        for (size_t i = 0; i < payloads.size(); ++i) {
          if (static_cast<int>(i % 64) % connections != c) continue;
          auto res = client.Post("/api/v1/ingest", headers, payloads[i], "application/json");
          if (!res || res->status != 200) ++failed;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    if (failed > 0) state.SkipWithError("some posts failed");
    samples += batch_samples;
  }
  server.Stop();
  Report(state, *store, samples);
}
BENCHMARK(BM_IngestHttp)
    ->Arg(8)
    ->Arg(32)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

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
