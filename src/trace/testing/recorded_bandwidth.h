// SPDX-License-Identifier: Apache-2.0
// Test helper: Kineto's recorded "memory bandwidth (GB/s)" of each memcpy/memset row of a trace,
// read straight from the trace file (row numbers follow the reader's rules for which events
// become rows, checked name by name). It lets the HTA comparison check the memory bandwidth
// summary on the exact values HTA used while the model does not carry them. Test-only.
// Owner: trace.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "base/status.h"
#include "trace/model/trace_model.h"

namespace vigil::trace::testing {

// Row -> recorded GB/s for the rows of `trace` (read from trace.path) that carry the argument.
StatusOr<std::unordered_map<uint32_t, double>> RecordedBandwidths(const RankTrace& trace);

}  // namespace vigil::trace::testing
