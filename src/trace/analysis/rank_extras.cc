// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/rank_extras.h"

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
  // Categories use our kernel patterns in both modes (HTA's rules know only NCCL).
  static const KernelClassifier kDefault = KernelClassifier::Default();
  out->attribution = AttributeKernels(t, config.hta_compat ? kDefault : config.classifier);
  out->cpu_ops = ComputeCpuOpBreakdown(t, out->attribution);
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
