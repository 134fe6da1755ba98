// SPDX-License-Identifier: Apache-2.0
#include "trace/analyzer.h"

#include <algorithm>
#include <thread>

#include "trace/insights/rules.h"

namespace vigil::trace {
namespace {

RankReport AnalyzeRank(const RankTrace& t, const AnalysisConfig& config) {
  RankReport r;
  r.trace = &t;
  r.rank = t.meta.rank;
  r.view = BuildGpuView(t, config);
  r.unit_ns = r.view.unit_ns;
  r.temporal = ComputeTemporalBreakdown(r.view);
  r.kernels = ComputeKernelBreakdown(r.view, t.strings, config.top_kernels, config.duration_ratio);
  r.overlap = ComputeCommOverlap(r.view);
  int64_t threshold = config.kernel_wait_threshold_ns / r.unit_ns;
  r.idle = ComputeIdleBreakdown(r.view, threshold, config.hta_compat);
  if (config.hta_compat) {
    r.launch = ComputeLaunchStatsHta(t, BuildHtaRows(t), config);
  } else {
    r.launch = ComputeLaunchStats(t, config);
  }
  for (const Step& s : t.links.steps) {
    StepReport sr;
    sr.number = s.number;
    sr.ts = s.ts;
    sr.dur = s.dur;
    int64_t from = s.ts, to = s.ts + s.dur;
    if (r.unit_ns != 1) {
      from = (from + r.unit_ns - 1) / r.unit_ns;
      to = to / r.unit_ns;
    }
    std::vector<size_t> subset = SelectLaunchedIn(r.view, from, to);
    sr.temporal = ComputeTemporalBreakdown(r.view, &subset);
    r.steps.push_back(sr);
  }
  ComputeRankExtras(t, r.view, config, &r.extras);
  return r;
}

}  // namespace

Report Analyze(const std::vector<RankTrace>& traces, const AnalysisConfig& config,
               const InsightThresholds& thresholds) {
  Report report;
  report.config = config;
  if (config.hta_compat) report.config.classifier = KernelClassifier::HtaCompat();
  report.ranks.resize(traces.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < traces.size(); i = next++) {
      report.ranks[i] = AnalyzeRank(traces[i], report.config);
    }
  };
  unsigned n = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()),
                                  static_cast<unsigned>(traces.size()));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < n; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  ComputeCrossRank(report.ranks, &report.cross, config.straggler_pct);
  if (traces.size() >= 2) {
    std::vector<const RankTrace*> ptrs;
    for (const RankTrace& t : traces) ptrs.push_back(&t);
    report.multi_path = ComputeMultiRankCriticalPath(ptrs, report.config.classifier);
    ApplyArrivalStragglers(ptrs, report.multi_path.matches, config.straggler_pct, &report.cross);
  }
  report.insights = RunInsightRules(report, thresholds);
  return report;
}

}  // namespace vigil::trace
