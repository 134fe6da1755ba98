// SPDX-License-Identifier: Apache-2.0
// straggler: one rank is slower than the others, which then wait for it in collectives. Where
// collectives are matched across ranks it names the rank that arrives last (the others wait for
// it alone for more than `straggler_pct` of the trace); otherwise each rank whose computation or
// step time is more than `straggler_pct` above the median. The gain is the projected step time
// with that rank as fast as the median, on the ranks' joined graph.
#include <set>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {
namespace {

std::string Percent(double pct) { return std::to_string(static_cast<int>(pct)) + "%"; }

}  // namespace

void RuleStraggler(const Report& report, const InsightThresholds& th, std::vector<Insight>* out) {
  std::set<int32_t> seen;
  const bool by_arrival =
      !report.cross.stragglers.empty() && report.cross.stragglers.front().metric == "arrival";
  for (const Straggler& s : report.cross.stragglers) {
    if (s.excess_pct < th.Get("straggler_pct") || !seen.insert(s.rank).second) continue;
    Insight in;
    in.id = "straggler";
    in.severity =
        s.excess_pct >= 3 * th.Get("straggler_pct") ? Severity::kCritical : Severity::kWarning;
    if (by_arrival) {
      in.title = "Rank " + std::to_string(s.rank) + " arrives last at " +
                 std::to_string(s.last_arrivals) + " of " + std::to_string(s.collectives) +
                 " collectives";
      in.detail = "The other ranks waited " + FormatMs(s.late_ns) + " for it alone (" +
                  Percent(s.excess_pct) +
                  " of the trace): its communication kernels start after everyone else's.";
    } else {
      in.title = "Rank " + std::to_string(s.rank) + " is a straggler (" + s.metric + " time +" +
                 Percent(s.excess_pct) + " over the median)";
      in.detail = "Median " + s.metric + " time " +
                  FormatMs(s.metric == "step" ? report.cross.median_step_ns
                                              : report.cross.median_compute_ns) +
                  "; the other ranks wait for this one in each collective.";
    }
    for (const RankSummary& r : report.cross.ranks) {
      Evidence e;
      e.what = "rank";
      e.name = r.rank == s.rank ? "straggler" : "peer";
      e.rank = r.rank;
      e.dur_ns = s.metric == "step" ? r.step_ns : r.compute_ns;
      e.value = static_cast<double>(e.dur_ns);
      if (r.rank == s.rank || in.evidence.size() < 4) in.evidence.push_back(e);
    }
    in.estimated_gain_pct = by_arrival && &s == &report.cross.stragglers.front()
                                ? ProjectedGainPct(report, WhatIfChange::kLastArriverAtMedian)
                                : 0;
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
