// SPDX-License-Identifier: Apache-2.0
// What the insight rules share: the rule signature, the list of rules (defined one per file),
// and small helpers to build evidence from trace rows. Internal to insights/.
// Owner: trace.
#pragma once

#include <string>
#include <vector>

#include "trace/analyzer.h"
#include "trace/insights/insight.h"
#include "trace/insights/projected_gain.h"

namespace vigil::trace {

using InsightRule = void (*)(const Report& report, const InsightThresholds& th,
                             std::vector<Insight>* out);

void RuleDataloaderBottleneck(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleLowGpuUtilization(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleNoTensorCores(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleLaunchBound(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleExcessiveSync(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RulePageableMemcpy(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleExposedCommunication(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleStraggler(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleMemoryNearCapacity(const Report&, const InsightThresholds&, std::vector<Insight>*);
void RuleUnfusedOptimizer(const Report&, const InsightThresholds&, std::vector<Insight>*);

// Evidence pointing at one event row of a rank.
Evidence RowEvidence(const RankReport& r, std::string what, uint32_t row, double value = 0);
// The rank's analysed GPU span in ns (0 without GPU work).
int64_t SpanNs(const RankReport& r);
double Pct(double part, double whole);
std::string FormatMs(int64_t ns);

}  // namespace vigil::trace
