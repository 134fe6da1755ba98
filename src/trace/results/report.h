// SPDX-License-Identifier: Apache-2.0
// The analysis results: what every analysis computed for each rank (RankReport), for each
// ProfilerStep (StepReport) and across ranks (Report), which the insight rules read and the
// outputs (terminal, JSON, HTML, Perfetto) render. A layer of its own so that rules, outputs and
// cross-rank analyses depend on results, not on the orchestrator that computes them
// (analyzer.h). The traces must outlive the Report: it refers to their string tables and rows.
// Owner: trace. Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/analysis/comm_overlap.h"
#include "trace/analysis/cpu_op_breakdown.h"
#include "trace/analysis/cpu_profile.h"
#include "trace/analysis/critical_path.h"
#include "trace/analysis/efficiency.h"
#include "trace/analysis/gpu_view.h"
#include "trace/analysis/idle_time.h"
#include "trace/analysis/kernel_breakdown.h"
#include "trace/analysis/kernel_sequences.h"
#include "trace/analysis/launch_bound.h"
#include "trace/analysis/launch_stats.h"
#include "trace/analysis/memcpy_analysis.h"
#include "trace/analysis/memory_bandwidth.h"
#include "trace/analysis/memory_timeline.h"
#include "trace/analysis/multi_rank_critical_path.h"
#include "trace/analysis/op_attribution.h"
#include "trace/analysis/queue_length.h"
#include "trace/analysis/roofline.h"
#include "trace/analysis/straggler.h"
#include "trace/analysis/sync_points.h"
#include "trace/analysis/temporal_breakdown.h"
#include "trace/analysis/trace_diff.h"
#include "trace/analysis/user_annotations.h"
#include "trace/analysis/what_if.h"
#include "trace/analysis/workload.h"
#include "trace/model/trace_model.h"
#include "trace/results/insight.h"

namespace vigil::trace {

struct StepReport {
  int64_t number = -1;
  int64_t ts = 0;              // ns (trace clock)
  int64_t dur = 0;             // ns
  TemporalBreakdown temporal;  // GPU work launched during the step
};

// One field per per-rank analysis (trace/analyses.cc lists them, with their writers).
struct RankReport {
  const RankTrace* trace = nullptr;
  int32_t rank = -1;
  int64_t unit_ns = 1;  // units of the view-based results (1, or 1000 in HTA mode)
  GpuView view;
  TemporalBreakdown temporal;
  std::vector<StepReport> steps;
  IdleBreakdown idle;
  CpuProfileSummary cpu_profile;  // --cpu-profile: the host's hottest functions meanwhile
  KernelBreakdown kernels;
  CommOverlap overlap;
  LaunchStats launch;
  MemcpyAnalysis memcpy;
  SyncAnalysis syncs;
  Workload workload;  // training or inference, parallelism, graphs, GPU features
  LaunchBoundAnalysis launch_bound;
  std::vector<KernelSequence> sequences;
  std::vector<AnnotationStat> annotations;
  std::vector<DeviceMemory> memory;
  CriticalPath critical_path;
  Efficiency efficiency;
  Roofline roofline;  // % of roofline (default mode only)
  QueueLengthSummary queue_length;
  MemoryBandwidthSummary memory_bw;
  WhatIfReport what_if;       // projections on the critical path (computed with it)
  OpAttribution attribution;  // launching operator, module and category of every GPU event
  CpuOpBreakdown cpu_ops;
};

struct Report {
  AnalysisConfig config;
  std::vector<RankReport> ranks;
  CrossRank cross;
  MultiRankCriticalPath multi_path;  // computed when there are >= 2 ranks
  std::vector<Insight> insights;
  std::optional<TraceDiff> diff;  // --diff: this run (base) against the other (test)
};

}  // namespace vigil::trace
