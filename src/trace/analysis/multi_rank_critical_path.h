// SPDX-License-Identifier: Apache-2.0
// The critical path across ranks: the longest path through the ranks' dependency graphs
// (path_graph.h) joined at their matched collectives (collective_match.h): a collective ends on
// every rank only after the last rank arrived (its kernel started), so each member's end depends
// on every member's arrival. Walking back from the node that happens last, each step follows the
// dependency that released it last; at a collective whose last arrival was on another rank the
// path crosses to that rank. The window is one ProfilerStep present on every rank (the slowest
// one, not the last unless it is the only one), or the whole trace when there are no common
// steps. Times are in the first rank's clock: every other rank is shifted by the offset
// collective_match.h computed; ranks whose offset is unknown are not joined.
// Owner: trace. Pure function of linked RankTraces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/collective_match.h"
#include "trace/analysis/kernel_classifier.h"
#include "trace/analysis/what_if.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

// What the time on the path was spent on.
enum class PathCategory : uint8_t { kCompute, kCommunication, kLaunch, kSync, kIdle };
std::string_view PathCategoryName(PathCategory c);  // "compute", "communication", ...

struct PathSegment {
  uint32_t rank_index = 0;
  uint32_t row = kNoIndex;
  int64_t start = 0;  // ns, aligned clock
  int64_t end = 0;
  PathCategory category = PathCategory::kCompute;
};

struct PathCrossing {
  uint32_t collective = 0;          // index into MultiRankCriticalPath::matches.collectives
  uint32_t waiting_rank_index = 0;  // the rank the path was on
  uint32_t last_rank_index = 0;     // the rank that arrived last (the path continues there)
  int64_t arrival = 0;              // ns, aligned: the last arrival
  int64_t wait_ns = 0;              // last arrival - the waiting rank's arrival
  int64_t late_by_ns = 0;           // last arrival - the second-last arrival
};

struct RankPathShare {
  uint32_t rank_index = 0;
  int32_t rank = -1;
  int64_t ns = 0;  // path time spent on this rank (its segments and the gaps before them)
  double pct = 0;
};

struct MultiRankCriticalPath {
  bool valid = false;
  std::string note;   // why there is no path, or caveats
  int64_t step = -1;  // ProfilerStep analysed, -1 for the whole trace
  int64_t start = 0;  // ns, aligned clock
  int64_t end = 0;
  int64_t by_category[5] = {0, 0, 0, 0, 0};  // indexed by PathCategory
  std::vector<RankPathShare> ranks;
  std::vector<PathCrossing> crossings;  // in time order
  std::vector<PathSegment> segments;    // in time order
  CollectiveMatches matches;
  // Projections on the joined graph: "comm_overlapped", "slowest_rank_at_median" and, when a
  // rank arrived last at collectives, "last_arriver_at_median" (multi_rank_what_if.h).
  std::vector<WhatIfResult> what_if;
  int64_t Length() const { return end - start; }
  int64_t Category(PathCategory c) const { return by_category[static_cast<int>(c)]; }
  std::string BoundBy() const;
  // Indices into segments of the longest ones, longest first.
  std::vector<size_t> TopSegments(size_t n) const;
};

MultiRankCriticalPath ComputeMultiRankCriticalPath(const std::vector<const RankTrace*>& ranks,
                                                   const KernelClassifier& classifier,
                                                   size_t max_nodes = 1'000'000);

}  // namespace vigil::trace
