// SPDX-License-Identifier: Apache-2.0
// pageable_memcpy: host<->device copies from pageable memory, which stage through a bounce buffer
// and block the CPU. Fires when pageable copies move at least `pageable_min_bytes`.
#include <algorithm>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RulePageableMemcpy(const Report& report, const InsightThresholds& th,
                        std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const MemcpyAnalysis& m = r.memcpy;
    if (m.pageable_bytes < static_cast<int64_t>(th.Get("pageable_min_bytes"))) continue;
    uint64_t count = 0;
    for (const MemcpyKindStats& k : m.kinds) count += k.pageable_count;
    Insight in;
    in.id = "pageable_memcpy";
    in.severity = Severity::kWarning;
    in.title = "Rank " + std::to_string(r.rank) + " copies " + std::to_string(count) +
               " times from/to pageable host memory";
    in.detail = std::to_string(m.pageable_bytes >> 20) + " MiB in " + FormatMs(m.pageable_ns) +
                " through pageable memory.";
    for (uint32_t row : m.pageable_rows) {
      if (in.evidence.size() >= 5) break;
      in.evidence.push_back(
          RowEvidence(r, "memcpy", row, static_cast<double>(r.trace->events.bytes[row])));
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kPageableCopiesPinned);
    in.recommendation =
        "Pin host buffers (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with "
        "non_blocking=True.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kPageableMemcpyThresholds[] = {
    {"pageable_min_bytes", 1048576, "bytes copied through pageable memory worth reporting"},
};

extern const InsightRuleSpec kPageableMemcpyRule = {"pageable_memcpy", kPageableMemcpyThresholds,
                                                    RulePageableMemcpy};

}  // namespace vigil::trace
