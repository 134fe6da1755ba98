// SPDX-License-Identifier: Apache-2.0
#include "trace/analyzer.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "trace/analyses.h"
#include "trace/insights/rules.h"

namespace vigil::trace {
namespace {

RankReport AnalyzeRank(const RankTrace& t, const AnalysisConfig& config) {
  RankReport r;
  r.trace = &t;
  r.rank = t.meta.rank;
  r.view = BuildGpuView(t, config);
  r.unit_ns = r.view.unit_ns;
  for (const RankAnalysis& a : RankAnalyses()) {
    if (a.compute != nullptr) a.compute(t, config, &r);
  }
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
  for (const ReportAnalysis& a : ReportAnalyses()) a.compute(traces, thresholds, &report);
  report.insights = RunInsightRules(report, thresholds);
  return report;
}

}  // namespace vigil::trace
