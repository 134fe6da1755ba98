// SPDX-License-Identifier: Apache-2.0
// Kernel breakdown: time by kernel class, with overlaps named the HTA way ("COMPUTATION
// overlapping COMMUNICATION"), and per-kernel statistics with HTA's top-N aggregation (kernels
// past the top N, or past the duration ratio of the cumulative sum, become "others").
// Owner: trace. Pure function of a GpuView.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

struct KernelStat {
  uint32_t name = 0;
  KernelClass cls = KernelClass::kCompute;
  uint64_t count = 0;
  int64_t sum = 0;  // view units
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation, 0 for one kernel
};

// One row of HTA's top-kernel table: a kernel, or "others" (then min/max/mean/stddev are over
// the per-kernel sums, exactly like HTA).
struct TopKernel {
  std::string name;
  KernelClass cls = KernelClass::kCompute;
  uint64_t count = 0;
  double sum = 0;
  double max = 0;
  double min = 0;
  double mean = 0;
  double stddev = 0;
};

struct KernelTypeTime {
  std::string type;  // "COMPUTATION", "COMPUTATION overlapping MEMORY", ...
  int64_t sum = 0;
  double pct = 0;  // rounded to 0.1 like HTA
};

struct KernelBreakdown {
  std::vector<KernelTypeTime> types;  // sorted by sum, largest first
  std::vector<KernelStat> kernels;    // every kernel name, largest sum first
  std::vector<TopKernel> top;         // per class: top kernels then "others", by class then name
};

KernelBreakdown ComputeKernelBreakdown(const GpuView& view, const StringTable& strings,
                                       int top_kernels, double duration_ratio);

}  // namespace vigil::trace
