// SPDX-License-Identifier: Apache-2.0
// Short kernels and launch-bound stretches: kernels that run for less time than the runtime call
// that launched them (CUDA, driver, HIP, graph launches alike), and runs of consecutive kernels on
// one stream where the GPU waited for the CPU before each of them. Pure function of a GpuView in
// default (nanosecond) mode and the linked trace.
// Owner: trace.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

struct LaunchBoundStretch {
  int64_t stream = -1;
  int64_t start = 0;  // view units
  int64_t end = 0;
  uint64_t kernels = 0;
  int64_t gpu_busy = 0;  // kernel time inside the stretch
};

struct LaunchBoundAnalysis {
  uint64_t kernels = 0;                       // kernels with a known launch call
  uint64_t short_kernels = 0;                 // GPU duration < launch call duration
  int64_t short_kernel_time = 0;              // their GPU time
  int64_t host_wait_gaps = 0;                 // idle before kernels whose launch came late
  std::vector<LaunchBoundStretch> stretches;  // >= min_run kernels, longest first, up to 20
};

LaunchBoundAnalysis AnalyzeLaunchBound(const GpuView& view, int64_t max_kernel,
                                       uint64_t min_run = 20);

}  // namespace vigil::trace
