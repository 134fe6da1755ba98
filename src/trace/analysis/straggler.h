// SPDX-License-Identifier: Apache-2.0
// Cross-rank comparison: per rank the mean step time, computation, communication and idle time;
// stragglers; and the spread of each top kernel's time across ranks. A straggler is the rank the
// others wait for: where collectives are matched across ranks, the one that arrives last (its
// communication kernel starts last, clocks aligned), ranked by the time the others waited for it
// alone; without matched collectives, a rank whose computation or step time exceeds the median by
// more than the threshold.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/collective_match.h"

namespace vigil::trace {

struct RankReport;

struct RankSummary {
  int32_t rank = -1;
  int64_t step_ns = 0;  // mean ProfilerStep duration (CPU), 0 when no steps
  int64_t compute_ns = 0;
  int64_t comm_ns = 0;
  int64_t idle_ns = 0;
  int64_t span_ns = 0;
};

struct Straggler {
  int32_t rank = -1;
  double excess_pct = 0;  // "arrival": others' wait for it / median trace span; else over median
  std::string metric;     // "arrival", "compute" or "step"
  uint32_t rank_index = 0;
  uint64_t last_arrivals = 0;  // "arrival": collectives it arrived at last
  uint64_t collectives = 0;    // of the collectives it shared
  int64_t late_ns = 0;         // the time the others waited for it alone
};

struct KernelSpread {
  std::string name;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int32_t min_rank = -1;
  int32_t max_rank = -1;
};

struct CrossRank {
  std::vector<RankSummary> ranks;
  std::vector<Straggler> stragglers;  // sorted by excess, largest first
  std::vector<KernelSpread> spread;   // top kernels of rank 0 (or the first rank)
  int64_t median_compute_ns = 0;
  int64_t median_step_ns = 0;
};

void ComputeCrossRank(const std::vector<RankReport>& ranks, CrossRank* out,
                      double straggler_pct = 10);

// Replaces the stragglers by the last arrivers at the matched collectives, when any rank was
// waited for (collective_match.h); keeps them otherwise.
void ApplyArrivalStragglers(const std::vector<const RankTrace*>& ranks,
                            const CollectiveMatches& matches, double straggler_pct, CrossRank* out);

}  // namespace vigil::trace
