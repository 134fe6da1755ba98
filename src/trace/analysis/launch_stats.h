// SPDX-License-Identifier: Apache-2.0
// Kernel launch statistics: for each GPU event and the runtime call that launched it, the CPU
// duration of the call, the GPU duration, and the launch delay. Default mode covers every launch
// API (CUDA, driver, HIP, memcpy/memset, CUDA/HIP graph launches, whose first kernel carries the
// delay) and uses delay = kernel start - call end. HTA mode reproduces HTA: only cudaLaunchKernel,
// cudaLaunchKernelExC, cudaMemcpyAsync and cudaMemsetAsync, and its delay formula
// (kernel start - call start + call duration).
// Owner: trace.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/analysis/gpu_view.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct LaunchOutlier {
  uint32_t launch_row = kNoIndex;
  uint32_t gpu_row = kNoIndex;
  int64_t delay = 0;  // view units
};

struct LaunchStats {
  int64_t unit_ns = 1;
  uint64_t n = 0;                 // launch/GPU-event pairs
  uint64_t short_kernels = 0;     // cpu <= runtime cutoff and gpu < cpu
  uint64_t runtime_outliers = 0;  // cpu > runtime cutoff
  uint64_t delay_outliers = 0;    // delay > launch-delay cutoff
  bool has_delay = false;
  double delay_mean = 0;
  double delay_p50 = 0;
  double delay_p95 = 0;
  double cpu_sum = 0;
  double gpu_sum = 0;
  std::map<std::string, uint64_t> by_api;  // launch call name -> GPU events
  uint64_t graph_launches = 0;
  uint64_t graph_kernels = 0;
  std::vector<LaunchOutlier> worst_delays;  // up to 10, largest first
};

LaunchStats ComputeLaunchStats(const RankTrace& trace, const AnalysisConfig& config);
LaunchStats ComputeLaunchStatsHta(const RankTrace& trace, const HtaRows& rows,
                                  const AnalysisConfig& config);

}  // namespace vigil::trace
