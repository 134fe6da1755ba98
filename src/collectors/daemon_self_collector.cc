// SPDX-License-Identifier: Apache-2.0
#include "collectors/daemon_self_collector.h"

#include <unistd.h>

#include <utility>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "base/version.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kCpu{"vigil_daemon_cpu_seconds_total",
                          "CPU time (user and system) vigild has used.", MetricKind::kCounter,
                          "seconds"};
constexpr MetricDesc kRss{"vigil_daemon_resident_memory_bytes",
                          "Resident memory of the vigild process.", MetricKind::kGauge, "bytes"};
constexpr MetricDesc kStoreSeries{"vigil_daemon_store_series",
                                  "Series held in the in-memory history.", MetricKind::kGauge, ""};
constexpr MetricDesc kStoreBytes{"vigil_daemon_store_bytes",
                                 "Memory held by the in-memory history.", MetricKind::kGauge,
                                 "bytes"};
constexpr MetricDesc kStoreDropped{"vigil_daemon_store_dropped_series_total",
                                   "Samples refused because the series cap was reached.",
                                   MetricKind::kCounter, ""};
constexpr MetricDesc kUptime{"vigil_daemon_uptime_seconds", "Seconds since vigild started.",
                             MetricKind::kGauge, "seconds"};
constexpr MetricDesc kDaemonInfo{"vigil_daemon_info",
                                 "Always 1; version and rpc_address are labels.",
                                 MetricKind::kGauge, "info"};
constexpr MetricDesc kSinkDropped{"vigil_daemon_sink_dropped_batches_total",
                                  "Batches a sink dropped because it fell behind or failed.",
                                  MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {&kCpu,          &kRss,    &kStoreSeries, &kStoreBytes,
                                          &kStoreDropped, &kUptime, &kDaemonInfo,  &kSinkDropped};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<DaemonSelfCollector>(context.OptionsFor<DaemonSelfCollectorOptions>());
}

}  // namespace

const CollectorInfo DaemonSelfCollector::kInfo = {
    .name = "daemon_self",
    .help = "vigild's own CPU, memory, series store, uptime and sink drops.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

DaemonSelfCollector::DaemonSelfCollector(DaemonSelfCollectorOptions options)
    : options_(std::move(options)) {
  if (options_.start_unix_ns == 0) {
    options_.start_unix_ns = UnixNanos();
  }
}

Status DaemonSelfCollector::Collect(MetricWriter& out) {
  if (!options_.store_stats) {
    // vigild --once prints the host alone: its own numbers would make the output unstable.
    return NotFoundError("the daemon's own state is reported only by a running vigild");
  }
  const std::string rpc = options_.rpc_address ? options_.rpc_address() : std::string();
  if (rpc.empty()) {
    out.Add(kDaemonInfo, 1, {{"version", kVersion}});
  } else {
    out.Add(kDaemonInfo, 1, {{"rpc_address", rpc}, {"version", kVersion}});
  }
  out.Add(kUptime, static_cast<double>(UnixNanos() - options_.start_unix_ns) / 1e9);
  const int64_t now = MonotonicNanos();
  if (store_stats_at_ns_ == 0 || now - store_stats_at_ns_ >= kStoreStatsEvery) {
    store_stats_ = options_.store_stats();
    store_stats_at_ns_ = now;
  }
  const SeriesStoreStats& stats = store_stats_;
  out.Add(kStoreSeries, static_cast<double>(stats.series));
  out.Add(kStoreBytes, static_cast<double>(stats.bytes));
  out.Add(kStoreDropped, static_cast<double>(stats.dropped_series));
  if (options_.sink_drops) {
    for (const SinkDrops& d : options_.sink_drops()) {
      out.Add(kSinkDropped, static_cast<double>(d.dropped), {{"sink", d.sink}});
    }
  }
  // /proc/self/stat: "pid (comm) state ppid ..." - comm may hold spaces, so split after ')'.
  VIGIL_RETURN_IF_ERROR(files_.ReadInto("/proc/self/stat", &buf_, 4096));
  const size_t paren = buf_.rfind(')');
  if (paren == std::string::npos) {
    return DataLossError("/proc/self/stat: no ')'");
  }
  std::vector<std::string_view> fields = SplitWhitespace(std::string_view(buf_).substr(paren + 1));
  // After ')': state(0) ppid(1) ... utime(11) stime(12) ... rss(21).
  if (fields.size() < 22) {
    return DataLossError("/proc/self/stat: too few fields");
  }
  const auto utime = ParseUint64(fields[11]);
  const auto stime = ParseUint64(fields[12]);
  const auto rss_pages = ParseUint64(fields[21]);
  const long hz = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  if (!utime || !stime || !rss_pages || hz <= 0 || page <= 0) {
    return DataLossError("/proc/self/stat: bad number");
  }
  out.Add(kCpu, static_cast<double>(*utime + *stime) / static_cast<double>(hz));
  out.Add(kRss, static_cast<double>(*rss_pages) * static_cast<double>(page));
  return OkStatus();
}

}  // namespace vigil
