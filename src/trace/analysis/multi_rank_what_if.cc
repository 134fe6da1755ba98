// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/multi_rank_what_if.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace vigil::trace {
namespace {

// Edges that are a rank's own work, not waiting for another rank.
bool IsOwnWork(const PathGraph& g, const PathEdge& e, uint32_t to) {
  switch (e.kind) {
    case PathEdgeKind::kThread:
      return e.part == PathPart::kCpu;
    case PathEdgeKind::kDuration:
      return static_cast<KernelClass>(g.gpu_class[to / 2]) != KernelClass::kComm;
    default:
      return false;
  }
}

}  // namespace

std::vector<int64_t> RankWork(const PathGraph& g) {
  std::vector<int64_t> work(g.traces.size(), 0);
  for (uint32_t v = 0; v < g.nodes(); ++v) {
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      if (IsOwnWork(g, g.in[k], v)) work[g.rank[v / 2]] += g.in[k].weight;
    }
  }
  return work;
}

WhatIfResult ProjectSlowestRankAtMedian(const PathGraph& g, const CriticalPath& measured) {
  const std::vector<int64_t> work = RankWork(g);
  const auto slowest =
      static_cast<uint32_t>(std::max_element(work.begin(), work.end()) - work.begin());
  return ProjectRankAtMedian(g, measured, slowest, "slowest_rank_at_median");
}

WhatIfResult ProjectRankAtMedian(const PathGraph& g, const CriticalPath& measured, uint32_t slowest,
                                 std::string name) {
  std::vector<int64_t> work = RankWork(g);
  if (work.size() < 2 || slowest >= work.size()) {
    WhatIfResult r;
    r.name = std::move(name);
    r.note = "needs at least two ranks";
    return r;
  }
  std::vector<int64_t> sorted = work;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median =
      n % 2 ? static_cast<double>(sorted[n / 2])
            : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2;
  const double factor =
      work[slowest] > 0 ? std::min(1.0, median / static_cast<double>(work[slowest])) : 1.0;
  std::vector<int64_t> w = MeasuredWeights(g);
  const std::vector<int64_t> before = w;
  for (uint32_t v = 0; v < g.nodes(); ++v) {
    if (g.rank[v / 2] != slowest) continue;
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      if (IsOwnWork(g, g.in[k], v)) {
        w[k] = static_cast<int64_t>(std::llround(static_cast<double>(w[k]) * factor));
      }
    }
  }
  std::vector<std::pair<uint32_t, uint32_t>> steps;
  WalkCriticalPath(g, g.time, before, g.slack, &steps);
  int64_t removable = 0;
  for (const auto& [v, k] : steps) {
    if (k != kNoIndex) removable += before[k] - w[k];
  }
  WhatIfResult r = ProjectWeights(g, measured, std::move(name), w, g.slack);
  r.removable_ns = removable;
  r.note = "rank index " + std::to_string(slowest) + " scaled by " + std::to_string(factor);
  return r;
}

}  // namespace vigil::trace
