// SPDX-License-Identifier: Apache-2.0
// The estimated gain of an insight: the step time projected with the cause removed, from the
// what-if projections on the critical path (analysis/what_if.h), as a share of the measured
// step: (measured - projected) / measured. It never exceeds the time the change can remove.
// Owner: trace. Used by the insight rules.
#pragma once

#include "trace/results/report.h"

namespace vigil::trace {

enum class WhatIfChange {
  kGpuIdleRemoved,        // the GPU never waits on the path (launches, syncs, input)
  kCommOverlapped,        // communication hidden behind computation
  kPageableCopiesPinned,  // copies from/to pageable memory at pinned speed (2x)
  kLastArriverAtMedian,   // multi-rank: the last arriver at collectives as fast as the median
  kGemmOnTensorCores,     // GEMMs that miss the tensor cores at the tensor-core rate
};

// 0 when the projection is not available for the rank. In [0, 100].
double ProjectedGainPct(const RankReport& rank, WhatIfChange change);
// Multi-rank projections (on the joined graph); 0 when there is none.
double ProjectedGainPct(const Report& report, WhatIfChange change);

}  // namespace vigil::trace
