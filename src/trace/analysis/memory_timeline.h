// SPDX-License-Identifier: Apache-2.0
// Memory timeline from the profiler's "[memory]" events (profile_memory=True): per device the
// allocated and reserved bytes over time (downsampled for charts), the peak and when it happened,
// and the peak as a share of the device's capacity (deviceProperties.totalGlobalMem).
// Owner: trace. Pure function of a RankTrace.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct MemoryPoint {
  int64_t ts = 0;  // ns
  int64_t allocated = 0;
  int64_t reserved = 0;
};

struct DeviceMemory {
  int32_t device_type = -1;  // 0 CPU, 1 CUDA/HIP
  int32_t device_id = -1;
  uint64_t events = 0;
  int64_t peak_allocated = 0;
  int64_t peak_ts = 0;
  int64_t peak_reserved = 0;
  int64_t capacity = -1;            // bytes, -1 when unknown
  double peak_pct = -1;             // peak reserved (what the allocator holds) of capacity
  std::vector<MemoryPoint> points;  // at most ~200, keeping each window's maximum
};

std::vector<DeviceMemory> AnalyzeMemoryTimeline(const RankTrace& trace, size_t max_points = 200);

}  // namespace vigil::trace
