// SPDX-License-Identifier: Apache-2.0
// Cross-rank comparison: per rank the mean step time, computation, communication and idle time;
// stragglers (ranks whose computation or step time exceeds the median by more than a threshold,
// which the other ranks then wait for inside collectives); and the spread of each top kernel's
// time across ranks.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  double excess_pct = 0;  // above the median
  std::string metric;     // "compute" or "step"
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

}  // namespace vigil::trace
