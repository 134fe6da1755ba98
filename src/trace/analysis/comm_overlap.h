// SPDX-License-Identifier: Apache-2.0
// Communication/computation overlap (HTA's definition): the share of merged communication time
// during which computation also runs. Pure function of a GpuView.
// Owner: trace.
#pragma once

#include <cstdint>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

struct CommOverlap {
  bool has_comm = false;   // false: no communication kernels (HTA reports null)
  int64_t comm_time = 0;   // merged, view units
  int64_t overlapped = 0;  // comm time with computation running too
  double pct = 0;          // 100 * overlapped / comm_time
};

CommOverlap ComputeCommOverlap(const GpuView& view);

}  // namespace vigil::trace
