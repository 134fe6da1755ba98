// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_conntrack_collector.h"

#include <charconv>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricKind kCounter = MetricKind::kCounter;

constexpr MetricDesc kEntries{"vigil_host_conntrack_entries",
                              "Connections in the netfilter connection tracking table.",
                              MetricKind::kGauge, ""};
constexpr MetricDesc kLimit{"vigil_host_conntrack_entries_limit",
                            "Size limit of the connection tracking table (nf_conntrack_max).",
                            MetricKind::kGauge, ""};
constexpr MetricDesc kFound{"vigil_host_conntrack_found_total",
                            "Connection lookups that found an existing entry.", kCounter, ""};
constexpr MetricDesc kInvalid{"vigil_host_conntrack_invalid_total",
                              "Packets that could not be tracked.", kCounter, ""};
constexpr MetricDesc kIgnored{"vigil_host_conntrack_ignored_total",
                              "Packets seen that were already tracked or not trackable.", kCounter,
                              ""};
constexpr MetricDesc kInserted{"vigil_host_conntrack_inserted_total",
                               "Entries inserted into the table.", kCounter, ""};
constexpr MetricDesc kInsertFailed{"vigil_host_conntrack_insert_failed_total",
                                   "Entries that could not be inserted (a clash).", kCounter, ""};
constexpr MetricDesc kDropped{"vigil_host_conntrack_dropped_total",
                              "Packets dropped because a new entry could not be made.", kCounter,
                              ""};
constexpr MetricDesc kEarlyDropped{"vigil_host_conntrack_early_dropped_total",
                                   "Entries evicted to make room while the table was full.",
                                   kCounter, ""};
constexpr MetricDesc kSearchRestarts{"vigil_host_conntrack_search_restarts_total",
                                     "Table lookups restarted because of a hash resize.", kCounter,
                                     ""};

constexpr const MetricDesc* kMetrics[] = {
    &kEntries,  &kLimit,        &kFound,   &kInvalid,      &kIgnored,
    &kInserted, &kInsertFailed, &kDropped, &kEarlyDropped, &kSearchRestarts};
// In the order of kStatColumns.
constexpr const MetricDesc* kStatMetrics[] = {&kFound,        &kInvalid,       &kIgnored,
                                              &kInserted,     &kInsertFailed,  &kDropped,
                                              &kEarlyDropped, &kSearchRestarts};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcConntrackCollector>(context.paths);
}

// Reads a file holding one decimal number.
StatusOr<uint64_t> ReadNumber(const std::string& path, KeptFiles& files, std::string* buf) {
  VIGIL_RETURN_IF_ERROR(files.ReadInto(path, buf));
  StatusOr<uint64_t> v = ParseCounterField(Trim(*buf), "conntrack");
  return v.ok() ? v : StatusOr<uint64_t>(v.status().WithContext(path));
}

}  // namespace

const CollectorInfo ProcConntrackCollector::kInfo = {
    .name = "proc_conntrack",
    .help = "Netfilter connection tracking table size, limit and events (nf_conntrack).",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcConntrackCollector::ProcConntrackCollector(HostPaths paths) : paths_(std::move(paths)) {}

StatusOr<ProcConntrackCollector::Stat> ProcConntrackCollector::ParseStat(std::string_view text) {
  Stat stat;
  std::string_view header;
  if (!NextLine(&text, &header)) {
    return DataLossError("nf_conntrack stat: empty");
  }
  // Column index of each wanted counter (-1: not printed by this kernel).
  std::array<int, kStatColumns.size()> column;
  column.fill(-1);
  std::string_view name;
  for (int i = 0; NextField(&header, &name); ++i) {
    for (size_t k = 0; k < kStatColumns.size(); ++k) {
      if (kStatColumns[k] == name) {
        column[k] = i;
        stat.found |= uint64_t{1} << k;
      }
    }
  }
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view field;
    for (int i = 0; NextField(&line, &field); ++i) {
      uint64_t v = 0;
      auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v, 16);
      if (ec != std::errc() || ptr != field.data() + field.size()) {
        return DataLossError("nf_conntrack stat: bad hex number '" + SanitizeForLog(field, 40) +
                             "'");
      }
      for (size_t k = 0; k < column.size(); ++k) {
        stat.values[k] += column[k] == i ? v : 0;
      }
    }
  }
  return stat;
}

Status ProcConntrackCollector::Collect(MetricWriter& out) {
  const std::string count_path = paths_.Proc("sys/net/netfilter/nf_conntrack_count");
  StatusOr<uint64_t> count = ReadNumber(count_path, files_, &buf_);
  if (IsAbsent(count.status())) {
    return NotFoundError(count_path + ": not present (the nf_conntrack module is not loaded)");
  }
  VIGIL_RETURN_IF_ERROR(count.status());
  out.Add(kEntries, static_cast<double>(*count));
  StatusOr<uint64_t> limit =
      ReadNumber(paths_.Proc("sys/net/netfilter/nf_conntrack_max"), files_, &buf_);
  if (!limit.ok()) {
    return IsAbsent(limit.status()) ? DataLossError(limit.status().message()) : limit.status();
  }
  out.Add(kLimit, static_cast<double>(*limit));
  const std::string stat_path = paths_.Proc("net/stat/nf_conntrack");
  Status read = files_.ReadInto(stat_path, &buf_);
  if (read.code() == StatusCode::kNotFound) {
    return OkStatus();  // Kernels built without CONFIG_NF_CONNTRACK_PROCFS.
  }
  VIGIL_RETURN_IF_ERROR(read);
  StatusOr<Stat> stat = ParseStat(buf_);
  if (!stat.ok()) {
    return stat.status().WithContext(stat_path);
  }
  for (size_t k = 0; k < kStatColumns.size(); ++k) {
    if (stat->found & (uint64_t{1} << k)) {
      out.Add(*kStatMetrics[k], static_cast<double>(stat->values[k]));
    }
  }
  return OkStatus();
}

}  // namespace vigil
