// SPDX-License-Identifier: Apache-2.0
// The analyses beyond HTA's breakdowns, gathered per rank. Each lives in its own file; this
// header only groups their results and runs them.
// Owner: trace.
#pragma once

#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/analysis/critical_path.h"
#include "trace/analysis/efficiency.h"
#include "trace/analysis/gpu_view.h"
#include "trace/analysis/kernel_sequences.h"
#include "trace/analysis/launch_bound.h"
#include "trace/analysis/memcpy_analysis.h"
#include "trace/analysis/memory_bandwidth.h"
#include "trace/analysis/memory_timeline.h"
#include "trace/analysis/queue_length.h"
#include "trace/analysis/roofline.h"
#include "trace/analysis/straggler.h"
#include "trace/analysis/sync_points.h"
#include "trace/analysis/user_annotations.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct RankExtras {
  MemcpyAnalysis memcpy;
  SyncAnalysis syncs;
  LaunchBoundAnalysis launch_bound;
  std::vector<KernelSequence> sequences;
  std::vector<AnnotationStat> annotations;
  std::vector<DeviceMemory> memory;
  CriticalPath critical_path;
  Efficiency efficiency;
  QueueLengthSummary queue_length;
  MemoryBandwidthSummary memory_bw;
  Roofline roofline;
};

void ComputeRankExtras(const RankTrace& trace, const GpuView& view, const AnalysisConfig& config,
                       RankExtras* out);

}  // namespace vigil::trace
