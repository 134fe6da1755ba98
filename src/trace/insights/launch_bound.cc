// SPDX-License-Identifier: Apache-2.0
// launch_bound: kernels are shorter than the CPU time to launch them and the GPU waits for each
// launch. Fires when the share of such short kernels exceeds `launch_bound_short_pct` and there
// are launch-bound stretches (or host-wait idle is a tenth of the span). Covers CUDA, driver, HIP
// and graph launches. Where the trace already launches CUDA/HIP graphs the advice is about the
// work left outside them, not to start using graphs.
#include <algorithm>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleLaunchBound(const Report& report, const InsightThresholds& th, std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const LaunchBoundAnalysis& lb = r.launch_bound;
    if (lb.kernels < 20) continue;
    double short_pct = Pct(static_cast<double>(lb.short_kernels), static_cast<double>(lb.kernels));
    int64_t span = SpanNs(r);
    double wait_pct =
        Pct(static_cast<double>(lb.host_wait_gaps * r.unit_ns), static_cast<double>(span));
    if (short_pct < th.Get("launch_bound_short_pct") || (lb.stretches.empty() && wait_pct < 10))
      continue;
    Insight in;
    in.id = "launch_bound";
    in.severity = wait_pct >= 25 ? Severity::kCritical : Severity::kWarning;
    in.title = "Rank " + std::to_string(r.rank) + " is launch-bound";
    in.detail = std::to_string(static_cast<int>(short_pct)) +
                "% of kernels run shorter than their launch call; the GPU waited " +
                FormatMs(lb.host_wait_gaps * r.unit_ns) + " for launches.";
    for (size_t k = 0; k < std::min<size_t>(5, lb.stretches.size()); ++k) {
      const LaunchBoundStretch& s = lb.stretches[k];
      Evidence e;
      e.what = "launch-bound stretch";
      e.name = std::to_string(s.kernels) + " kernels on stream " + std::to_string(s.stream);
      e.rank = r.rank;
      e.ts_ns = s.start * r.unit_ns;
      e.dur_ns = (s.end - s.start) * r.unit_ns;
      e.value = static_cast<double>(s.kernels);
      in.evidence.push_back(e);
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kGpuIdleRemoved);
    const Workload& w = r.workload;
    const std::string batch = w.kind == WorkloadKind::kInference
                                  ? "batch more requests or tokens per forward pass"
                                  : "raise the batch size";
    if (w.graph_launches > 0) {
      in.detail += " The trace already launches " + std::to_string(w.graph_launches) +
                   " graphs, which ran " +
                   std::to_string(static_cast<int>(100 * w.graph_kernel_share)) +
                   "% of its GPU work.";
      in.recommendation =
          "Graphs are in use: bring the kernels still launched one by one into the captured "
          "region (e.g. full-graph instead of piecewise capture, capture the sampler and "
          "pre/post-processing), fuse the small kernels (torch.compile), or " +
          batch + ".";
    } else {
      in.recommendation =
          "Capture the step in CUDA/HIP graphs (torch.cuda.graphs, torch.compile mode="
          "\"reduce-overhead\"), fuse small kernels (torch.compile), or " +
          batch + ".";
    }
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kLaunchBoundThresholds[] = {
    {"launch_bound_short_pct", 50, "share of kernels shorter than their launch call"},
};

extern const InsightRuleSpec kLaunchBoundRule = {"launch_bound", kLaunchBoundThresholds,
                                                 RuleLaunchBound};

}  // namespace vigil::trace
