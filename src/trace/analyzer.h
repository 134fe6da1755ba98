// SPDX-License-Identifier: Apache-2.0
// Runs every analysis of the registry (trace/analyses.h) on every rank (ranks in parallel), then
// the cross-rank ones and the insight rules, producing the Report (results/report.h) the outputs
// render. The traces must outlive the Report: it refers to their string tables and rows.
// Owner: trace.
#pragma once

#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/insights/rules.h"
#include "trace/model/trace_model.h"
#include "trace/results/report.h"

namespace vigil::trace {

Report Analyze(const std::vector<RankTrace>& traces, const AnalysisConfig& config,
               const InsightThresholds& thresholds = {});

}  // namespace vigil::trace
