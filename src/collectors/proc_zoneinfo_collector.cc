// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_zoneinfo_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kZoneMemory{
    "vigil_host_zone_memory_bytes",
    "Memory of a zone by kind: free, managed, present, spanned, and the min, low and high "
    "reclaim watermarks.",
    MetricKind::kGauge, "bytes"};
constexpr MetricDesc kProtection{
    "vigil_host_zone_protection_bytes",
    "Free memory a zone keeps back from allocations that could use the zone at index.",
    MetricKind::kGauge, "bytes"};
constexpr MetricDesc kNumaAllocations{
    "vigil_host_zone_numa_allocations_total",
    "Page allocations from a zone by NUMA outcome (hit, miss, foreign, interleave, local, "
    "other).",
    MetricKind::kCounter, ""};

constexpr const MetricDesc* kMetrics[] = {&kZoneMemory, &kProtection, &kNumaAllocations};

struct Key {
  std::string_view name;  // As the file spells it.
  const MetricDesc* desc;
  std::string_view label;  // Value of `kind` or `outcome`.
};
// "pages free" is the first line of the zone's own block; the rest follow it, indented.
constexpr Key kKeys[] = {{"free", &kZoneMemory, "free"},
                         {"min", &kZoneMemory, "min"},
                         {"low", &kZoneMemory, "low"},
                         {"high", &kZoneMemory, "high"},
                         {"spanned", &kZoneMemory, "spanned"},
                         {"present", &kZoneMemory, "present"},
                         {"managed", &kZoneMemory, "managed"},
                         {"numa_hit", &kNumaAllocations, "hit"},
                         {"numa_miss", &kNumaAllocations, "miss"},
                         {"numa_foreign", &kNumaAllocations, "foreign"},
                         {"numa_interleave", &kNumaAllocations, "interleave"},
                         {"numa_local", &kNumaAllocations, "local"},
                         {"numa_other", &kNumaAllocations, "other"}};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcZoneinfoCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcZoneinfoCollector::kInfo = {
    .name = "proc_zoneinfo",
    .help = "Per-zone free memory, watermarks and NUMA allocations from /proc/zoneinfo.",
    .enabled_by_default = false,
    .metrics = kMetrics,
    .create = &Create,
};

ProcZoneinfoCollector::ProcZoneinfoCollector(HostPaths paths, double page_size)
    : paths_(std::move(paths)), page_size_(page_size > 0 ? page_size : HostPageSize()) {}

Status ProcZoneinfoCollector::Parse(std::string_view text, double page_size, MetricWriter& out) {
  std::string node;
  std::string zone;
  bool in_zone_block = false;  // After "pages free": keys belong to the zone, not the node.
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view rest = line;
    std::string_view key;
    if (!NextField(&rest, &key)) {
      continue;
    }
    if (key == "Node") {
      // "Node 0, zone      DMA" (mm/vmstat.c zoneinfo_show_print).
      std::string_view n, zone_word, z;
      if (!NextField(&rest, &n) || !n.ends_with(',') || !NextField(&rest, &zone_word) ||
          zone_word != "zone" || !NextField(&rest, &z)) {
        return DataLossError("zoneinfo: line is not 'Node N, zone NAME'");
      }
      n.remove_suffix(1);
      VIGIL_RETURN_IF_ERROR(ParseCounterField(n, "zoneinfo node").status());
      node = std::string(n);
      zone = SanitizeForLog(z, 32);
      in_zone_block = false;
      continue;
    }
    if (node.empty()) {
      continue;
    }
    if (key == "pages") {  // "pages free     3840"
      in_zone_block = true;
      if (!NextField(&rest, &key)) {
        continue;
      }
    }
    if (!in_zone_block) {
      continue;  // Per-node statistics; see the header.
    }
    if (key == "protection:") {  // "protection: (0, 3018, 12746, 12746, 12746)"
      std::string_view list = Trim(rest);
      if (list.size() < 2 || list.front() != '(' || list.back() != ')') {
        return DataLossError("zoneinfo: bad protection list");
      }
      list = list.substr(1, list.size() - 2);
      int index = 0;
      for (std::string_view item : Split(list, ',')) {
        VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(Trim(item), "zoneinfo protection"));
        out.Add(kProtection, static_cast<double>(v) * page_size,
                {{"index", std::to_string(index++)}, {"numa_node", node}, {"zone", zone}});
        if (index >= 16) {
          break;
        }
      }
      continue;
    }
    for (const Key& k : kKeys) {
      if (k.name != key) {
        continue;
      }
      std::string_view value;
      if (!NextField(&rest, &value)) {
        return DataLossError("zoneinfo: no value for " + std::string(key));
      }
      VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(value, "zoneinfo"));
      const bool bytes = k.desc == &kZoneMemory;
      out.Add(*k.desc, static_cast<double>(v) * (bytes ? page_size : 1),
              {{bytes ? "kind" : "outcome", std::string(k.label)},
               {"numa_node", node},
               {"zone", zone}});
      break;
    }
  }
  return OkStatus();
}

Status ProcZoneinfoCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("zoneinfo");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  Status s = Parse(buf_, page_size_, out);
  return s.ok() ? s : s.WithContext(path);
}

}  // namespace vigil
