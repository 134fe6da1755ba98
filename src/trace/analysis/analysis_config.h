// SPDX-License-Identifier: Apache-2.0
// Settings shared by the analyses: HTA-compatibility, thresholds and kernel patterns. Every
// threshold is documented in docs/trace-json-schema.md. Plain value type.
// Owner: trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trace/analysis/kernel_classifier.h"

namespace vigil::trace {

struct GraphCaptures;  // analysis/graph_captures.h

struct AnalysisConfig {
  // Reproduce Holistic Trace Analysis: drop the last ProfilerStep (when there are several) and
  // the GPU work launched outside the kept steps, round float timestamps to integer us (start up,
  // end down), HTA's kernel classes and launch-call names.
  bool hta_compat = false;
  // Idle-time "kernel wait": a gap under this after the previous kernel, launch already issued.
  // HTA documents 30 ns but compares it with us gaps, so its effective threshold is 30 us; we
  // keep HTA's effective value as the default.
  int64_t kernel_wait_threshold_ns = 30'000;
  // Kernel breakdown: top-N kernels per class, and HTA's cumulative duration ratio.
  int top_kernels = 5;
  double duration_ratio = 0.8;
  // Launch statistics (HTA's defaults): runtime call longer than this is an outlier; launch delay
  // longer than this is an outlier; a "short" kernel runs for less than its launch call took.
  int64_t runtime_cutoff_ns = 50'000;
  int64_t launch_delay_cutoff_ns = 100'000;
  // Launch-bound stretches: kernels up to this long whose launch arrived after the stream was free.
  int64_t short_kernel_ns = 10'000;
  KernelClassifier classifier = KernelClassifier::Default();
  // What-if projections of kernel categories made faster, "attention=2x,gemm=1.5x" (what_if.h).
  std::string what_if;
  // % of roofline (analysis/roofline.h); off with --no-roofline (to measure what it costs).
  bool roofline = true;
  // --graph-captures: the capture traces of the CUDA/HIP graphs the trace replays, so replayed
  // kernels get their operators' work (graph_capture_links.h). Shared: the report's roofline
  // shapes point into these traces, and the report holds its config.
  std::shared_ptr<const GraphCaptures> graph_captures;
};

}  // namespace vigil::trace
