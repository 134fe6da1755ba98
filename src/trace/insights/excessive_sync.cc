// SPDX-License-Identifier: Apache-2.0
// excessive_sync: the CPU blocks on the GPU too often (cudaDeviceSynchronize,
// cudaStreamSynchronize, .item(), .cpu(), blocking and pageable copies, allocations: the calls
// model/host_blocking.h says block the host, never a GPU-side wait such as cudaStreamWaitEvent).
// Fires when synchronising calls take
// more than `excessive_sync_pct` of the span or exceed `excessive_sync_count_per_step` in a step.
#include <algorithm>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleExcessiveSync(const Report& report, const InsightThresholds& th,
                       std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const SyncAnalysis& s = r.syncs;
    if (s.count == 0) continue;
    int64_t window = SpanNs(r);
    if (window <= 0) window = r.trace->links.last_end - r.trace->links.first_ts;
    double pct = Pct(static_cast<double>(s.total_ns), static_cast<double>(window));
    if (pct < th.Get("excessive_sync_pct") &&
        s.max_per_step < static_cast<uint64_t>(th.Get("excessive_sync_count_per_step")))
      continue;
    Insight in;
    in.id = "excessive_sync";
    in.severity =
        pct >= 4 * th.Get("excessive_sync_pct") ? Severity::kCritical : Severity::kWarning;
    in.title = "Rank " + std::to_string(r.rank) + " synchronises with the GPU " +
               std::to_string(s.count) + " times";
    std::string causes;
    std::vector<std::pair<int64_t, std::string>> by;
    for (const auto& [cause, c] : s.by_cause) by.emplace_back(c.dur_ns, cause);
    std::sort(by.rbegin(), by.rend());
    for (size_t k = 0; k < std::min<size_t>(3, by.size()); ++k) {
      const std::string_view hint = SyncCauseHint(by[k].second);
      causes += (k ? ", " : "") + by[k].second + (hint.empty() ? "" : " = " + std::string(hint));
    }
    in.detail = "Blocked " + FormatMs(s.total_ns) + " in synchronising calls, mostly from " +
                causes + "; up to " + std::to_string(s.max_per_step) + " per step.";
    for (size_t k = 0; k < std::min<size_t>(5, s.longest.size()); ++k) {
      Evidence e = RowEvidence(r, "sync call", s.longest[k].row);
      if (s.longest[k].cause_row != kNoIndex) {
        e.name += " in " +
                  std::string(r.trace->strings.Get(r.trace->events.name[s.longest[k].cause_row]));
      }
      e.value = static_cast<double>(e.dur_ns);
      in.evidence.push_back(e);
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kGpuIdleRemoved);
    in.recommendation =
        "Avoid .item(), .cpu(), print(tensor) and torch.cuda.synchronize() inside the step; keep "
        "metrics on the GPU and read them every N steps; use non_blocking copies.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kExcessiveSyncThresholds[] = {
    {"excessive_sync_pct", 5, "CPU time blocked in synchronisation, of the span"},
    {"excessive_sync_count_per_step", 10, "synchronising calls in one ProfilerStep"},
};

extern const InsightRuleSpec kExcessiveSyncRule = {"excessive_sync", kExcessiveSyncThresholds,
                                                   RuleExcessiveSync};

}  // namespace vigil::trace
