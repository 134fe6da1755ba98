// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --perfetto FILE`: an augmented Chrome-trace JSON that opens in Perfetto UI: the
// trace's events (ranks as separate processes), kernels that overlap on one stream moved to extra
// "overlap" tracks so none is lost, counters (GPU busy, memory allocated), the critical path as
// flow arrows (and, with several ranks, the cross-rank critical path's jumps from the last rank
// to arrive at a collective to the rank that waited), and the insights' evidence as instants.
// Pure function of a Report.
// Owner: trace.
#pragma once

#include <string>

#include "trace/results/report.h"

namespace vigil::trace {

std::string RenderPerfettoTrace(const Report& report);

}  // namespace vigil::trace
