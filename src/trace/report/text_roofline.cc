// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "trace/report/roofline_report.h"

namespace vigil::trace {
namespace {

void RenderGraphReplayText(const Roofline& x, std::string* out) {
  if (x.graph_replayed_kernels == 0) return;
  const GraphCaptureSummary& g = x.graph_captures;
  if (!x.graph_captures_given) {
    *out += fmt::format(
        "    {} GPU events ran in CUDA/HIP graph replays without an operator: give the graph "
        "capture trace(s) with --graph-captures to model them\n",
        x.graph_replayed_kernels);
    return;
  }
  std::string methods;
  for (const auto& [method, n] : g.by_method) {
    methods += fmt::format("{}{} {}", methods.empty() ? "" : ", ", AlignMethodName(method), n);
  }
  *out += fmt::format(
      "    graph replays: {} of {} matched to a capture ({}), {} of {} GPU events linked to "
      "captured operators\n",
      g.matched_launches, g.graph_launches, methods.empty() ? "none" : methods, g.linked_events,
      g.replayed_events);
}

}  // namespace

void RenderRooflineText(const RankReport& r, std::string* out) {
  const Roofline& x = r.roofline;
  if (!x.computed || x.rank.kernels == 0) return;
  const RooflineTotals& t = x.rank;
  const double covered = 100.0 * t.Coverage();
  if (t.modelled_kernels == 0) {
    *out +=
        "  roofline: no kernel has a work model (needs a trace taken with record_shapes=True"
        " and modelled operators)\n";
    RenderGraphReplayText(x, out);
    return;
  }
  if (!t.has_peaks) {
    *out += fmt::format("  roofline: GPU not in the peak table; {:.0f}% of kernel time modelled\n",
                        covered);
    RenderGraphReplayText(x, out);
    return;
  }
  *out += fmt::format(
      "  roofline: {:.1f}% of the replayed device time ({:.1f}% of wall), {:.0f}% of kernel "
      "time modelled\n",
      t.PctOfReplayed(), t.PctOfWall(), covered);
  *out +=
      fmt::format("    peaks: {} {} {:.4g} TFLOP/s, memory {:.3g} TB/s\n", x.gpu_model, x.main_peak,
                  x.main_peak_flops_per_s / 1e12, x.memory_bandwidth_bytes_per_s / 1e12);
  RenderGraphReplayText(x, out);
}

}  // namespace vigil::trace
