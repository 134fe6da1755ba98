// SPDX-License-Identifier: Apache-2.0
#include "trace/insights/rules.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

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

std::span<const InsightRuleSpec* const> AllInsightRules() {
  static constexpr const InsightRuleSpec* kRules[] = {
      &kDataloaderBottleneckRule, &kLowGpuUtilizationRule, &kNoTensorCoresRule,
      &kLaunchBoundRule,          &kExcessiveSyncRule,     &kPageableMemcpyRule,
      &kExposedCommunicationRule, &kStragglerRule,         &kMemoryNearCapacityRule,
      &kUnfusedOptimizerRule,
  };
  return kRules;
}

InsightThresholds::InsightThresholds() {
  for (const InsightRuleSpec* rule : AllInsightRules()) {
    for (const ThresholdSpec& t : rule->thresholds) values_.emplace(t.name, t.default_value);
  }
}

double InsightThresholds::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    std::fprintf(stderr, "insight threshold %.*s is not declared by any rule\n",
                 static_cast<int>(name.size()), name.data());
    std::abort();
  }
  return it->second;
}

Status InsightThresholds::Set(std::string_view name, double value) {
  auto it = values_.find(name);
  if (it == values_.end()) return InvalidArgumentError("unknown threshold: " + std::string(name));
  it->second = value;
  return OkStatus();
}

std::vector<Insight> RunInsightRules(const Report& report, const InsightThresholds& th) {
  std::vector<Insight> out;
  for (const InsightRuleSpec* rule : AllInsightRules()) rule->run(report, th, &out);
  std::stable_sort(out.begin(), out.end(), [](const Insight& a, const Insight& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.estimated_gain_pct > b.estimated_gain_pct;
  });
  return out;
}

}  // namespace vigil::trace
