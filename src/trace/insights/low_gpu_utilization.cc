// SPDX-License-Identifier: Apache-2.0
// low_gpu_utilization: the GPU is idle for a large share of the analysed span. Fires when the busy
// share (100 - idle %) is under `low_utilization_busy_pct`; evidence: the longest idle gaps.
#include <algorithm>

#include "trace/analysis/intervals.h"
#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

void RuleLowGpuUtilization(const Report& report, const InsightThresholds& th,
                           std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    if (!r.temporal.valid || r.temporal.kernel_time <= 0) continue;
    double busy = 100.0 - r.temporal.Pct(r.temporal.idle);
    if (busy >= th.Get("low_utilization_busy_pct")) continue;
    // The five longest gaps between busy spans (the view is sorted by start), longest first and
    // the earlier among equals, found in one pass without copying the spans.
    constexpr size_t kGaps = 5;
    std::vector<Span> gaps;
    auto longer = [](const Span& a, const Span& b) {
      return a.second - a.first > b.second - b.first;
    };
    int64_t busy_end = r.view.size() > 0 ? r.view.end(0) : 0;
    for (size_t i = 1; i < r.view.size(); ++i) {
      if (r.view.ts[i] > busy_end) {
        const Span gap{busy_end, r.view.ts[i]};
        if (gaps.size() < kGaps || longer(gap, gaps.back())) {
          gaps.insert(std::upper_bound(gaps.begin(), gaps.end(), gap, longer), gap);
          if (gaps.size() > kGaps) gaps.pop_back();
        }
      }
      busy_end = std::max(busy_end, r.view.end(i));
    }
    Insight in;
    in.id = "low_gpu_utilization";
    in.severity =
        busy < th.Get("low_utilization_busy_pct") / 2 ? Severity::kCritical : Severity::kWarning;
    in.title = "GPU of rank " + std::to_string(r.rank) + " is busy only " +
               std::to_string(static_cast<int>(busy)) + "% of the time";
    const double idle_sum =
        static_cast<double>(r.idle.host_wait + r.idle.kernel_wait + r.idle.other);
    in.detail =
        "Idle " + FormatMs(r.temporal.idle * r.unit_ns) + " of " +
        FormatMs(r.temporal.kernel_time * r.unit_ns) + "; gaps between kernels (all " +
        std::to_string(r.idle.streams.size()) + " streams): host wait " +
        std::to_string(static_cast<int>(Pct(static_cast<double>(r.idle.host_wait), idle_sum))) +
        "%, kernel wait " +
        std::to_string(static_cast<int>(Pct(static_cast<double>(r.idle.kernel_wait), idle_sum))) +
        "%, other " +
        std::to_string(static_cast<int>(Pct(static_cast<double>(r.idle.other), idle_sum))) + "%.";
    for (size_t k = 0; k < gaps.size(); ++k) {
      Evidence e;
      e.what = "idle gap";
      e.name = "GPU idle";
      e.rank = r.rank;
      e.ts_ns = gaps[k].first * r.unit_ns;
      e.dur_ns = (gaps[k].second - gaps[k].first) * r.unit_ns;
      e.value = static_cast<double>(e.dur_ns);
      in.evidence.push_back(e);
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kGpuIdleRemoved);
    const Workload& w = r.workload;
    const std::string remedies =
        std::string(w.kind == WorkloadKind::kInference ? "larger batches of requests"
                                                       : "larger batches") +
        (w.graph_launches > 0 ? ", capturing more of the step in the graphs already in use"
                              : ", CUDA graphs") +
        " or torch.compile help.";
    in.recommendation =
        r.idle.host_wait >= r.idle.other
            ? "The CPU does not feed the GPU fast enough: see launch_bound, excessive_sync and "
              "dataloader_bottleneck; " +
                  remedies
            : "Look at what runs between GPU bursts (CPU work, I/O, synchronisation) in the "
              "evidence gaps.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kLowGpuUtilizationThresholds[] = {
    {"low_utilization_busy_pct", 60, "GPU busy below this share of the span"},
};

extern const InsightRuleSpec kLowGpuUtilizationRule = {
    "low_gpu_utilization", kLowGpuUtilizationThresholds, RuleLowGpuUtilization};

}  // namespace vigil::trace
