// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/rank_extras.h"

#include "trace/analysis/work_model/op_models.h"

namespace vigil::trace {

void ComputeRankExtras(const RankTrace& t, const GpuView& view, const AnalysisConfig& config,
                       RankExtras* out) {
  out->memcpy = AnalyzeMemcpy(t);
  out->syncs = AnalyzeSyncPoints(t);
  out->launch_bound = AnalyzeLaunchBound(view, config.short_kernel_ns / view.unit_ns);
  out->sequences = FindKernelSequences(view);
  out->annotations = AnalyzeUserAnnotations(t);
  out->memory = AnalyzeMemoryTimeline(t);
  out->critical_path = ComputeCriticalPath(t, config.classifier);
  out->efficiency = AnalyzeEfficiency(t, view);
  // HTA has no roofline, and its view repeats rows (HTA's duplicates): default mode only.
  if (config.roofline && !config.hta_compat) {
    out->roofline = AnalyzeRoofline(t, view, ModelOperator);
    SetRooflinePct(out->roofline, &out->efficiency);
  }
  if (config.hta_compat) {
    HtaRows rows = BuildHtaRows(t);
    out->queue_length = ComputeQueueLength(t, &rows);
    out->memory_bw = ComputeMemoryBandwidth(t, &rows);
  } else {
    out->queue_length = ComputeQueueLength(t, nullptr);
    out->memory_bw = ComputeMemoryBandwidth(t, nullptr);
  }
}

}  // namespace vigil::trace
