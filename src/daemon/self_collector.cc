// SPDX-License-Identifier: Apache-2.0
#include "daemon/self_collector.h"

#include <unistd.h>

#include <utility>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil::daemon {
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
constexpr MetricDesc kInfo{"vigil_daemon_info", "Always 1; version and rpc_address are labels.",
                           MetricKind::kGauge, "info"};
constexpr MetricDesc kSinkDropped{"vigil_daemon_sink_dropped_batches_total",
                                  "Batches a sink dropped because it fell behind or failed.",
                                  MetricKind::kCounter, ""};

}  // namespace

SelfCollector::SelfCollector(std::function<SeriesStoreStats()> store_stats,
                             std::function<std::vector<SinkDrops>()> sink_drops,
                             int64_t start_unix_ns, std::function<std::string()> rpc_address)
    : store_stats_(std::move(store_stats)),
      sink_drops_(std::move(sink_drops)),
      start_unix_ns_(start_unix_ns),
      rpc_address_(std::move(rpc_address)) {}

std::vector<const MetricDesc*> SelfCollector::Metrics() {
  return {&kCpu,          &kRss,    &kStoreSeries, &kStoreBytes,
          &kStoreDropped, &kUptime, &kInfo,        &kSinkDropped};
}

Status SelfCollector::Collect(MetricWriter& out) {
  const std::string rpc = rpc_address_ ? rpc_address_() : std::string();
  if (rpc.empty()) {
    out.Add(kInfo, 1, {{"version", kVersion}});
  } else {
    out.Add(kInfo, 1, {{"rpc_address", rpc}, {"version", kVersion}});
  }
  out.Add(kUptime, static_cast<double>(UnixNanos() - start_unix_ns_) / 1e9);
  if (store_stats_) {
    const SeriesStoreStats stats = store_stats_();
    out.Add(kStoreSeries, static_cast<double>(stats.series));
    out.Add(kStoreBytes, static_cast<double>(stats.bytes));
    out.Add(kStoreDropped, static_cast<double>(stats.dropped_series));
  }
  if (sink_drops_) {
    for (const SinkDrops& d : sink_drops_()) {
      out.Add(kSinkDropped, static_cast<double>(d.dropped), {{"sink", d.sink}});
    }
  }
  // /proc/self/stat: "pid (comm) state ppid ..." - comm may hold spaces, so split after ')'.
  VIGIL_RETURN_IF_ERROR(ReadFileInto("/proc/self/stat", &buf_, 4096));
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

}  // namespace vigil::daemon
