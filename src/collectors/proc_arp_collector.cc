// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_arp_collector.h"

#include "base/strings.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kEntries{"vigil_host_arp_entries",
                              "Entries in the IPv4 neighbour (ARP) table, per interface.",
                              MetricKind::kGauge, ""};

constexpr const MetricDesc* kMetrics[] = {&kEntries};

// More interfaces than this is not a real host; the rest are counted under the last one.
constexpr size_t kMaxInterfaces = 4096;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcArpCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcArpCollector::kInfo = {
    .name = "proc_arp",
    .help = "ARP table entries per interface from /proc/net/arp.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcArpCollector::ProcArpCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcArpCollector::Parse(std::string_view text,
                               std::vector<std::pair<std::string_view, uint64_t>>* out) {
  out->clear();
  std::string_view line;
  if (!NextLine(&text, &line)) {
    return OkStatus();  // Not even a header: an empty table.
  }
  while (NextLine(&text, &line)) {
    // IP address, HW type, Flags, HW address, Mask, Device (net/ipv4/arp.c arp_format_neigh_entry).
    std::string_view field;
    std::string_view device;
    int n = 0;
    while (NextField(&line, &field)) {
      device = field;
      ++n;
    }
    if (n == 0) {
      continue;
    }
    if (n < 6) {
      return DataLossError("net/arp: line with " + std::to_string(n) + " columns, want 6");
    }
    bool found = false;
    for (auto& [name, count] : *out) {
      if (name == device) {
        ++count;
        found = true;
        break;
      }
    }
    if (!found && out->size() < kMaxInterfaces) {
      out->emplace_back(device, 1);
    } else if (!found) {
      ++out->back().second;
    }
  }
  return OkStatus();
}

Status ProcArpCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("net/arp");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  Status s = Parse(buf_, &counts_);
  if (!s.ok()) {
    return s.WithContext(path);
  }
  for (const auto& [device, count] : counts_) {
    out.Add(kEntries, static_cast<double>(count), {{"interface", SanitizeForLog(device, 64)}});
  }
  return OkStatus();
}

}  // namespace vigil
