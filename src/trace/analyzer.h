// SPDX-License-Identifier: Apache-2.0
// Runs every analysis on every rank (ranks in parallel) and the cross-rank ones, producing the
// Report the outputs (terminal, JSON, HTML, Perfetto) render. The traces must outlive the Report:
// it refers to their string tables and rows.
// Owner: trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/analysis/comm_overlap.h"
#include "trace/analysis/gpu_view.h"
#include "trace/analysis/idle_time.h"
#include "trace/analysis/kernel_breakdown.h"
#include "trace/analysis/launch_stats.h"
#include "trace/analysis/multi_rank_critical_path.h"
#include "trace/analysis/rank_extras.h"
#include "trace/analysis/straggler.h"
#include "trace/analysis/temporal_breakdown.h"
#include "trace/analysis/trace_diff.h"
#include "trace/insights/insight.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct StepReport {
  int64_t number = -1;
  int64_t ts = 0;              // ns (trace clock)
  int64_t dur = 0;             // ns
  TemporalBreakdown temporal;  // GPU work launched during the step
};

struct RankReport {
  const RankTrace* trace = nullptr;
  int32_t rank = -1;
  int64_t unit_ns = 1;  // units of the view-based results (1, or 1000 in HTA mode)
  GpuView view;
  TemporalBreakdown temporal;
  std::vector<StepReport> steps;
  KernelBreakdown kernels;
  CommOverlap overlap;
  IdleBreakdown idle;
  LaunchStats launch;
  RankExtras extras;  // the analyses beyond HTA's (model/extras)
};

struct Report {
  AnalysisConfig config;
  std::vector<RankReport> ranks;
  CrossRank cross;
  MultiRankCriticalPath multi_path;  // computed when there are >= 2 ranks
  std::vector<Insight> insights;
  std::optional<TraceDiff> diff;  // --diff: this run (base) against the other (test)
};

Report Analyze(const std::vector<RankTrace>& traces, const AnalysisConfig& config,
               const InsightThresholds& thresholds = {});

}  // namespace vigil::trace
