// SPDX-License-Identifier: Apache-2.0
// % of roofline, as the seed defines it: every kernel gets the work of the operator that launched
// it (op_kernel_links.h, from the per-operator work model); its roofline time is
// max(FLOPs / compute peak, bytes / memory bandwidth) with the peak of its dtype pair
// (roofline_math.h); the rank's and each step's figure is the sum of the roofline times over the
// length of the device timeline replayed with the idle gaps removed (roofline_replay.h), and over
// the measured wall time. Kernels without a work model keep their measured time in the timeline
// and add nothing to the sum; `coverage` says how much of the kernel time is modelled, so nobody
// reads a partial figure as whole.
// Owner: trace. Pure function of the trace, its GpuView and a work model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/analysis/gpu_view.h"
#include "trace/analysis/op_kernel_links.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct RooflineTotals {
  uint64_t kernels = 0;
  uint64_t modelled_kernels = 0;
  int64_t kernel_ns = 0;    // measured time of the kernels
  int64_t modelled_ns = 0;  // of the kernels with a work model
  double roofline_ns = 0;   // sum of the modelled kernels' roofline times
  double flops = 0;         // their work
  double bytes = 0;
  int64_t replayed_ns = 0;  // the device timeline replayed with the gaps removed
  int64_t wall_ns = 0;      // the measured device span
  bool has_peaks = false;   // the GPU is in the hwspec table
  // Share of the kernel time with a work model, in [0, 1]; 0 when there are no kernels.
  double Coverage() const;
  // 100 x roofline_ns / replayed_ns (or / wall_ns); -1 without peaks or modelled kernels.
  double PctOfReplayed() const;
  double PctOfWall() const;
};

struct RooflineStep {
  int64_t number = -1;  // ProfilerStep#N
  RooflineTotals totals;
};

// One operator name with one set of recorded inputs: a point of the roofline chart.
struct RooflineShape {
  // The trace whose strings and op_shapes `name` and `shapes` index: the analysed one, or the
  // graph-capture trace the operator was recorded in.
  const RankTrace* source = nullptr;
  uint32_t name = 0;           // string id of the operator
  uint32_t shapes = kNoIndex;  // index into source->op_shapes
  std::string_view category;   // the work model's
  std::string_view peak;       // ComputeSpecName of the peak used
  double peak_flops_per_s = 0;
  uint64_t calls = 0;
  uint64_t kernels = 0;
  int64_t kernel_ns = 0;
  double flops = 0;
  double bytes = 0;
  double roofline_ns = 0;
};

struct Roofline {
  bool computed = false;  // false when the analysis was turned off
  std::string gpu_model;  // hwspec model, "" when the GPU is not in the table
  double memory_bandwidth_bytes_per_s = 0;
  // The peak of most modelled kernel time (the chart's compute roof); "" when none is modelled.
  std::string_view main_peak;
  double main_peak_flops_per_s = 0;
  RooflineTotals rank;
  std::vector<RooflineStep> steps;
  std::vector<RooflineShape> shapes;  // by kernel time, largest first
  // (event row, roofline time in ns) of every modelled kernel: the what-if "every kernel at its
  // roofline" replays the critical path with these times.
  std::vector<std::pair<uint32_t, int64_t>> kernel_roofline_ns;
  // Kernels the trace shows under CUDA/HIP graph launches, and (when graph captures were given)
  // how many of those were linked to a captured operator.
  uint64_t graph_replayed_kernels = 0;
  bool graph_captures_given = false;
  GraphCaptureSummary graph_captures;
};

Roofline AnalyzeRoofline(const RankTrace& trace, const GpuView& view, const OpModelFn& model,
                         const GraphCaptures* captures = nullptr);

}  // namespace vigil::trace
