// SPDX-License-Identifier: Apache-2.0
// What-if (e) on the ranks' joined graph: the slowest rank as fast as the median. A rank's
// speed is its own work in the window (CPU time on its threads, GPU work other than
// communication); the slowest rank's edges are scaled by median / slowest and the joined graph
// is replayed (what_if.h), so the others stop waiting for it only as far as the dependencies let.
// Owner: trace. Pure function of a joined PathGraph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/critical_path.h"
#include "trace/analysis/path_graph.h"
#include "trace/analysis/what_if.h"

namespace vigil::trace {

// Per rank index: its work in the graph (ns), as defined above.
std::vector<int64_t> RankWork(const PathGraph& g);

// Rank `rank_index` scaled to the median rank's work.
WhatIfResult ProjectRankAtMedian(const PathGraph& g, const CriticalPath& measured,
                                 uint32_t rank_index, std::string name);
// The rank with the most work scaled to the median ("slowest_rank_at_median").
WhatIfResult ProjectSlowestRankAtMedian(const PathGraph& g, const CriticalPath& measured);

}  // namespace vigil::trace
