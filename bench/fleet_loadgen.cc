// SPDX-License-Identifier: Apache-2.0
// fleet_loadgen: pushes a simulated fleet's reports (bench/fleet_sim.h) to vigil-fleet
// (POST /api/v1/ingest, gzip JSON, one batch per daemon per report, as vigild's fleet sink sends
// them) or to a Prometheus remote-write receiver (snappy protobuf, one request per daemon per
// report), from several connections at once, as fast as it can or at --rate samples/s. Payloads
// are built and compressed before the clock starts, so the figures are the receiver's. Prints
// achieved samples/s, the receiver's CPU and RSS (from /proc/PID when --pid is given) and the
// growth of its storage (--disk: a file or directory; --sqlite: the ledger, counted in used
// pages after a checkpoint), per sample and per GPU-day of simulated time.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <httplib.h>

#include "base/gzip.h"
#include "base/time_util.h"
#include "fleet/sqlite_db.h"
#include "fleet_sim.h"
#include "sinks/fleet_push_sink.h"
#include "sinks/remote_write_encoding.h"

namespace vigil::bench {
namespace {

struct Payload {
  std::string body;
  size_t samples = 0;
  int host = 0;
};

std::string RemoteWriteBody(const std::string& host, const std::vector<Sample>& samples) {
  std::vector<RwTimeSeries> series;
  series.reserve(samples.size());
  for (const Sample& s : samples) {
    RwTimeSeries ts;
    ts.labels.emplace_back("__name__", std::string(s.desc->name));
    ts.labels.emplace_back("instance", host);
    for (const auto& l : s.labels) ts.labels.push_back(l);
    std::sort(ts.labels.begin(), ts.labels.end());
    ts.samples.push_back({s.value, s.time_ns / 1000000});
    series.push_back(std::move(ts));
  }
  std::string raw;
  EncodeWriteRequest(series, &raw);
  return SnappyCompress(raw);
}

struct ProcUsage {
  double cpu_s = 0;
  double rss_mb = 0, peak_rss_mb = 0;
};

ProcUsage ReadProc(int pid) {
  ProcUsage u;
  if (pid <= 0) return u;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    u.cpu_s = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) u.rss_mb = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) u.peak_rss_mb = std::stod(line.substr(6)) / 1024;
  }
  return u;
}

uint64_t DiskBytes(const std::string& path) {
  std::error_code ec;
  if (path.empty()) return 0;
  if (std::filesystem::is_regular_file(path, ec)) return std::filesystem::file_size(path, ec);
  uint64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

// Bytes in use by the ledger's pages once the WAL is checkpointed into the file.
uint64_t LedgerBytes(const std::string& path) {
  if (path.empty()) return 0;
  auto db = Db::Open(path);
  if (!db.ok()) return 0;
  (*db)->Exec("PRAGMA wal_checkpoint(PASSIVE)").IgnoreError();
  auto st = (*db)->Prepare(
      "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM "
      "pragma_freelist_count()), (SELECT page_size FROM pragma_page_size())");
  if (!st.ok() || !st->Step().value_or(false)) return 0;
  return static_cast<uint64_t>(st->Int(0) * st->Int(1));
}

// Bytes (with indexes) and rows of the ledger's tables: what each kind of row costs on disk.
void PrintLedgerTables(const std::string& path) {
  auto db = Db::Open(path);
  if (!db.ok()) return;
  auto st = (*db)->Prepare(
      "SELECT s.tbl_name, sum(d.pgsize) FROM dbstat d JOIN sqlite_schema s ON s.name = d.name"
      " GROUP BY s.tbl_name ORDER BY 2 DESC");
  if (!st.ok()) return;
  std::printf("  ledger tables (bytes with indexes / rows = bytes per row):");
  while (st->Step().value_or(false)) {
    const std::string table = st->Text(0);
    const int64_t bytes = st->Int(1);
    auto count = (*db)->Prepare("SELECT count(*) FROM \"" + table + "\"");
    const int64_t rows = count.ok() && count->Step().value_or(false) ? count->Int(0) : 0;
    if (rows == 0) continue;
    std::printf(" %s=%lld/%lld=%.0f", table.c_str(), static_cast<long long>(bytes),
                static_cast<long long>(rows),
                static_cast<double>(bytes) / static_cast<double>(rows));
  }
  std::printf("\n");
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"Pushes a simulated GPU fleet to vigil-fleet or a remote-write receiver."};
  std::string fleet_url, rw_url, disk, sqlite, label;
  FleetSimOptions sim;
  int ticks = 30, connections = 8, pid = 0;
  int64_t first_tick = 0;
  double rate = 0, interval_s = 10;
  app.add_option("--fleet-url", fleet_url, "vigil-fleet base URL (http://HOST:PORT)");
  app.add_option("--remote-write-url", rw_url, "remote-write URL (http://HOST:PORT/api/v1/write)");
  app.add_option("--hosts", sim.hosts, "simulated daemons");
  app.add_option("--gpus", sim.gpus, "GPUs per host");
  app.add_option("--series-per-gpu", sim.series_per_gpu, "GPU-level series per GPU (>= 3)");
  app.add_option("--host-series", sim.host_series, "host-level series per host");
  app.add_option("--interval", interval_s, "report interval of a daemon, seconds");
  app.add_option("--ticks", ticks, "reports per daemon to send");
  app.add_option("--first-tick", first_tick, "report number to start at (continue a run)");
  int64_t start_s = 0;
  app.add_option("--start", start_s,
                 "Unix seconds of report 0 (default: so the last report is now); give the same "
                 "value to continue a run with --first-tick");
  app.add_option("--job-ticks", sim.job_ticks, "mean job length in reports");
  app.add_option("--connections", connections, "concurrent connections");
  app.add_option("--rate", rate, "samples/s to send (0: as fast as accepted)");
  app.add_option("--pid", pid, "receiver process id (CPU and RSS from /proc)");
  app.add_option("--disk", disk, "receiver's storage (file or directory) to measure");
  app.add_option("--sqlite", sqlite, "the ledger file: its used pages are measured");
  app.add_option("--label", label, "name printed with the results");
  bool keep_alive = false;
  app.add_flag("--keep-alive", keep_alive,
               "reuse connections (vigild's fleet sink opens one per batch)");
  CLI11_PARSE(app, argc, argv);
  if (fleet_url.empty() == rw_url.empty()) {
    std::fprintf(stderr, "fleet_loadgen: give exactly one of --fleet-url, --remote-write-url\n");
    return 2;
  }
  sim.interval_ns = static_cast<int64_t>(interval_s * 1e9);
  sim.series_per_gpu = std::max(3, sim.series_per_gpu);
  connections = std::max(1, connections);
  const int64_t now = UnixNanos();
  sim.t0_ns = start_s > 0 ? start_s * 1000000000 : now - (first_tick + ticks) * sim.interval_ns;
  sim.t0_ns -= sim.t0_ns % sim.interval_ns;
  FleetSim fleet(sim);

  // Payloads in send order: report-major, so every host advances together.
  std::vector<Payload> payloads;
  std::vector<Sample> samples;
  for (int64_t k = 0; k < first_tick + ticks; ++k) {
    for (int h = 0; h < sim.hosts; ++h) {
      samples.clear();
      fleet.Report(h, k, &samples);
      if (k < first_tick) continue;
      const std::string host = fleet.HostName(h);
      Payload p{"", samples.size(), h};
      if (!fleet_url.empty()) {
        std::vector<const Sample*> ptrs;
        for (const Sample& s : samples) ptrs.push_back(&s);
        p.body = Gzip(
            FleetPushSink::EncodePayload(host, host + "-" + std::to_string(k + 1), k + 1, ptrs));
      } else {
        p.body = RemoteWriteBody(host, samples);
      }
      payloads.push_back(std::move(p));
    }
  }
  const std::string url = fleet_url.empty() ? rw_url : fleet_url;
  const size_t scheme_end = url.find("://");
  const size_t path_start = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const std::string base = url.substr(0, path_start);
  const std::string path =
      !fleet_url.empty()
          ? "/api/v1/ingest"
          : (path_start == std::string::npos ? "/api/v1/write" : url.substr(path_start));

  const uint64_t disk_before = DiskBytes(disk);
  const uint64_t ledger_before = LedgerBytes(sqlite);
  const ProcUsage before = ReadProc(pid);
  std::atomic<uint64_t> sent_samples{0}, acked_samples{0}, requests{0}, errors{0};
  std::mutex err_mu;
  std::string first_error;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int c = 0; c < connections; ++c) {
    workers.emplace_back([&, c] {
      httplib::Client client(base);
      client.set_keep_alive(keep_alive);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(std::chrono::seconds(60));
      httplib::Headers headers;
      const char* type = "application/json";
      if (fleet_url.empty()) {
        headers = {{"Content-Encoding", "snappy"}, {"X-Prometheus-Remote-Write-Version", "0.1.0"}};
        type = "application/x-protobuf";
      } else {
        headers = {{"Content-Encoding", "gzip"}};
      }
      uint64_t mine = 0;
      for (const Payload& p : payloads) {
        if (p.host % connections != c) continue;
        if (rate > 0) {
          const double due = static_cast<double>(mine) / (rate / connections);
          std::this_thread::sleep_until(start + std::chrono::duration<double>(due));
        }
        mine += p.samples;
        sent_samples += p.samples;
        ++requests;
        auto res = client.Post(path, headers, p.body, type);
        if (res && res->status / 100 == 2) {
          acked_samples += p.samples;
          continue;
        }
        ++errors;
        std::lock_guard<std::mutex> lock(err_mu);
        if (first_error.empty()) {
          first_error = res ? std::to_string(res->status) + " " + res->body.substr(0, 200)
                            : "no reply: " + httplib::to_string(res.error());
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ProcUsage after = ReadProc(pid);
  const uint64_t ledger_after = LedgerBytes(sqlite);
  const uint64_t disk_after = DiskBytes(disk);

  const double gpus = static_cast<double>(sim.hosts) * sim.gpus;
  const double gpu_days = gpus * static_cast<double>(ticks) * interval_s / 86400;
  const double acked = static_cast<double>(acked_samples.load());
  std::printf(
      "%s: target=%s hosts=%d gpus=%.0f series_per_gpu=%d host_series=%d interval_s=%.0f"
      " reports=%d connections=%d keep_alive=%d\n",
      label.empty() ? "loadgen" : label.c_str(), fleet_url.empty() ? "remote-write" : "fleet",
      sim.hosts, gpus, sim.series_per_gpu, sim.host_series, interval_s, ticks, connections,
      keep_alive ? 1 : 0);
  std::printf(
      "  samples_sent=%llu samples_acked=%.0f requests=%llu errors=%llu wall_s=%.3f"
      " samples_per_s=%.0f\n",
      static_cast<unsigned long long>(sent_samples.load()), acked,
      static_cast<unsigned long long>(requests.load()),
      static_cast<unsigned long long>(errors.load()), wall, acked / wall);
  if (!first_error.empty()) std::printf("  first_error=%s\n", first_error.c_str());
  std::printf("  start=%lld (pass --start with --first-tick %lld to continue)\n",
              static_cast<long long>(sim.t0_ns / 1000000000),
              static_cast<long long>(first_tick + ticks));
  if (pid > 0) {
    const double cpu = after.cpu_s - before.cpu_s;
    std::printf(
        "  receiver_cpu_s=%.2f receiver_cores=%.2f samples_per_core_s=%.0f rss_mb=%.1f"
        " peak_rss_mb=%.1f\n",
        cpu, cpu / wall, cpu > 0 ? acked / cpu : 0.0, after.rss_mb, after.peak_rss_mb);
  }
  auto growth = [&](const char* what, uint64_t b, uint64_t a) {
    const double bytes = static_cast<double>(a) - static_cast<double>(b);
    std::printf(
        "  %s_growth_bytes=%.0f bytes_per_sample=%.2f bytes_per_gpu_day=%.0f"
        " (simulated %.3f GPU-days)\n",
        what, bytes, acked > 0 ? bytes / acked : 0.0, gpu_days > 0 ? bytes / gpu_days : 0.0,
        gpu_days);
  };
  if (!sqlite.empty()) {
    growth("ledger", ledger_before, ledger_after);
    PrintLedgerTables(sqlite);
  }
  if (!disk.empty()) growth("disk", disk_before, disk_after);
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace vigil::bench

int main(int argc, char** argv) { return vigil::bench::Main(argc, argv); }
