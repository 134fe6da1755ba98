// SPDX-License-Identifier: Apache-2.0
#include "trace/insights/rules.h"

#include <algorithm>
#include <cstdio>

#include "trace/insights/rule_helpers.h"

namespace vigil::trace {

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

Evidence RowEvidence(const RankReport& r, std::string what, uint32_t row, double value) {
  Evidence e;
  e.what = std::move(what);
  e.rank = r.rank;
  if (row != kNoIndex) {
    e.name = std::string(r.trace->strings.Get(r.trace->events.name[row]));
    e.ts_ns = r.trace->events.ts[row];
    e.dur_ns = r.trace->events.dur[row];
  }
  e.value = value;
  return e;
}

int64_t SpanNs(const RankReport& r) {
  return r.temporal.valid ? r.temporal.kernel_time * r.unit_ns : 0;
}

double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

std::string FormatMs(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

std::vector<Insight> RunInsightRules(const Report& report, const InsightThresholds& th) {
  static constexpr InsightRule kRules[] = {
      RuleDataloaderBottleneck, RuleLowGpuUtilization, RuleNoTensorCores,        RuleLaunchBound,
      RuleExcessiveSync,        RulePageableMemcpy,    RuleExposedCommunication, RuleStraggler,
      RuleMemoryNearCapacity,   RuleUnfusedOptimizer,
  };
  std::vector<Insight> out;
  for (InsightRule rule : kRules) rule(report, th, &out);
  std::stable_sort(out.begin(), out.end(), [](const Insight& a, const Insight& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.estimated_gain_pct > b.estimated_gain_pct;
  });
  return out;
}

}  // namespace vigil::trace
