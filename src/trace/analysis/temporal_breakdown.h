// SPDX-License-Identifier: Apache-2.0
// Temporal breakdown of GPU time (HTA's definition): the span from the first GPU event's start to
// the last one's end, split into idle (no GPU work), compute (merged computation kernels) and
// non-compute (the rest: communication, memory, other); plus merged communication and memory time
// and the part of each not hidden under computation ("exposed"). Pure function of a GpuView.
// Owner: trace.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

struct TemporalBreakdown {
  bool valid = false;       // false when there is no GPU work
  int64_t kernel_time = 0;  // view units (ns, or us in HTA mode)
  int64_t idle = 0;
  int64_t compute = 0;
  int64_t non_compute = 0;
  int64_t comm = 0;
  int64_t memory = 0;
  int64_t exposed_comm = 0;
  int64_t exposed_memory = 0;
  double Pct(int64_t part) const {
    return kernel_time > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(kernel_time)
                           : 0.0;
  }
};

// Over `subset` (indices into the view), or all events when it is null.
TemporalBreakdown ComputeTemporalBreakdown(const GpuView& view,
                                           const std::vector<size_t>* subset = nullptr);

// Indices of the view's events launched inside [from, to) on the CPU timeline (a step).
std::vector<size_t> SelectLaunchedIn(const GpuView& view, int64_t from, int64_t to);

}  // namespace vigil::trace
