// SPDX-License-Identifier: Apache-2.0
// dataloader_bottleneck: the training loop waits for the next batch. Fires when the time spent in
// DataLoader iteration (the profiler's "enumerate(DataLoader)#..." ranges and __next__ calls)
// exceeds `dataloader_idle_pct` of the profiled steps.
#include <algorithm>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {
namespace {

bool IsDataloader(std::string_view n) {
  return n.find("enumerate(DataLoader)") != std::string_view::npos ||
         n.find("DataLoaderIter.__next__") != std::string_view::npos ||
         n.find("dataloader.py") != std::string_view::npos;
}

}  // namespace

void RuleDataloaderBottleneck(const Report& report, const InsightThresholds& th,
                              std::vector<Insight>* out) {
  for (const RankReport& r : report.ranks) {
    const RankTrace& t = *r.trace;
    const EventTable& e = t.events;
    int64_t steps_ns = 0;
    for (const Step& s : t.links.steps) steps_ns += s.dur;
    int64_t window = steps_ns > 0 ? steps_ns : (t.links.last_end - t.links.first_ts);
    if (window <= 0) continue;
    int64_t load_ns = 0;
    std::vector<uint32_t> rows;
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kUserAnnotation && e.kind[i] != EventKind::kCpuOp) continue;
      if (!IsDataloader(t.strings.Get(e.name[i]))) continue;
      // Count only the outermost dataloader range.
      uint32_t p = t.links.parent[i];
      bool nested = false;
      for (; p != kNoIndex; p = t.links.parent[p]) {
        if (IsDataloader(t.strings.Get(e.name[p]))) nested = true;
      }
      if (nested) continue;
      load_ns += e.dur[i];
      rows.push_back(i);
    }
    double pct = Pct(static_cast<double>(load_ns), static_cast<double>(window));
    if (pct < th.Get("dataloader_idle_pct")) continue;
    std::sort(rows.begin(), rows.end(),
              [&](uint32_t a, uint32_t b) { return e.dur[a] > e.dur[b]; });
    Insight in;
    in.id = "dataloader_bottleneck";
    in.severity =
        pct >= 2 * th.Get("dataloader_idle_pct") ? Severity::kCritical : Severity::kWarning;
    in.title = "Rank " + std::to_string(r.rank) + " waits for input data";
    in.detail = "DataLoader iteration takes " + FormatMs(load_ns) + " (" +
                std::to_string(static_cast<int>(pct)) + "% of the profiled steps).";
    for (size_t k = 0; k < std::min<size_t>(5, rows.size()); ++k) {
      in.evidence.push_back(
          RowEvidence(r, "dataloader", rows[k], static_cast<double>(e.dur[rows[k]])));
    }
    in.estimated_gain_pct = ProjectedGainPct(r, WhatIfChange::kGpuIdleRemoved);
    in.recommendation =
        "Raise DataLoader num_workers, set pin_memory=True and persistent_workers=True, prefetch "
        "(prefetch_factor), or move decoding/augmentation to the GPU.";
    out->push_back(std::move(in));
  }
}

constexpr ThresholdSpec kDataloaderBottleneckThresholds[] = {
    {"dataloader_idle_pct", 10, "share of the profiled steps spent in DataLoader iteration"},
};

extern const InsightRuleSpec kDataloaderBottleneckRule = {
    "dataloader_bottleneck", kDataloaderBottleneckThresholds, RuleDataloaderBottleneck};

}  // namespace vigil::trace
