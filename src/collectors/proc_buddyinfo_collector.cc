// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_buddyinfo_collector.h"

#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kFreeBlocks{"vigil_host_buddy_free_blocks",
                                 "Free blocks of 2^order contiguous pages, per NUMA node and zone.",
                                 MetricKind::kGauge, ""};

constexpr const MetricDesc* kMetrics[] = {&kFreeBlocks};

// MAX_PAGE_ORDER is 10 on x86 and up to 13 on arm64 with 64 KiB pages.
constexpr int kMaxOrders = 32;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcBuddyinfoCollector>(context.paths);
}

}  // namespace

const CollectorInfo ProcBuddyinfoCollector::kInfo = {
    .name = "proc_buddyinfo",
    .help = "Free memory blocks per NUMA node, zone and order from /proc/buddyinfo.",
    .enabled_by_default = false,
    .metrics = kMetrics,
    .create = &Create,
};

ProcBuddyinfoCollector::ProcBuddyinfoCollector(HostPaths paths) : paths_(std::move(paths)) {}

Status ProcBuddyinfoCollector::Parse(std::string_view text, MetricWriter& out) {
  std::string_view line;
  while (NextLine(&text, &line)) {
    if (Trim(line).empty()) {
      continue;
    }
    // "Node 0, zone   Normal    122    313 ..." (mm/vmstat.c frag_show_print).
    std::string_view node_word, node, zone_word, zone;
    if (!NextField(&line, &node_word) || node_word != "Node" || !NextField(&line, &node) ||
        !node.ends_with(',') || !NextField(&line, &zone_word) || zone_word != "zone" ||
        !NextField(&line, &zone)) {
      return DataLossError("buddyinfo: line is not 'Node N, zone NAME ...'");
    }
    node.remove_suffix(1);
    VIGIL_RETURN_IF_ERROR(ParseCounterField(node, "buddyinfo node").status());
    const std::string node_label(node);
    const std::string zone_label = SanitizeForLog(zone, 32);
    std::string_view field;
    for (int order = 0; order < kMaxOrders && NextField(&line, &field); ++order) {
      VIGIL_ASSIGN_OR_RETURN(uint64_t v, ParseCounterField(field, "buddyinfo"));
      out.Add(kFreeBlocks, static_cast<double>(v),
              {{"numa_node", node_label}, {"order", std::to_string(order)}, {"zone", zone_label}});
    }
  }
  return OkStatus();
}

Status ProcBuddyinfoCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("buddyinfo");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_));
  Status s = Parse(buf_, out);
  return s.ok() ? s : s.WithContext(path);
}

}  // namespace vigil
