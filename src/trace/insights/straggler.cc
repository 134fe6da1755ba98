// SPDX-License-Identifier: Apache-2.0
// straggler: one rank is slower than the others, which then wait in collectives. Fires for each
// rank whose computation or step time is more than `straggler_pct` above the median.
#include <set>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleStraggler(const Report& report, const InsightThresholds& th, std::vector<Insight>* out) {
  std::set<int32_t> seen;
  for (const Straggler& s : report.cross.stragglers) {
    if (s.excess_pct < th.Get("straggler_pct") || !seen.insert(s.rank).second) continue;
    Insight in;
    in.id = "straggler";
    in.severity =
        s.excess_pct >= 3 * th.Get("straggler_pct") ? Severity::kCritical : Severity::kWarning;
    in.title = "Rank " + std::to_string(s.rank) + " is a straggler (" + s.metric + " time +" +
               std::to_string(static_cast<int>(s.excess_pct)) + "% over the median)";
    for (const RankSummary& r : report.cross.ranks) {
      Evidence e;
      e.what = "rank";
      e.name = r.rank == s.rank ? "straggler" : "peer";
      e.rank = r.rank;
      e.dur_ns = s.metric == "step" ? r.step_ns : r.compute_ns;
      e.value = static_cast<double>(e.dur_ns);
      if (r.rank == s.rank || in.evidence.size() < 4) in.evidence.push_back(e);
    }
    in.detail = "Median " + s.metric + " time " +
                FormatMs(s.metric == "step" ? report.cross.median_step_ns
                                            : report.cross.median_compute_ns) +
                "; every other rank waits for this one in each collective.";
    in.estimated_gain_pct = 100.0 * s.excess_pct / (100.0 + s.excess_pct);
    in.recommendation =
        "Check that rank's host (thermal throttling, other processes, slower GPU or link), its "
        "data shard (longer sequences) and its load balance.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kStragglerThresholds[] = {
    {"straggler_pct", 10, "a rank's computation or mean step time above the median by this much"},
};

extern const InsightRuleSpec kStragglerRule = {"straggler", kStragglerThresholds, RuleStraggler};

}  // namespace vigil::trace
