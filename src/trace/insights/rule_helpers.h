// SPDX-License-Identifier: Apache-2.0
// What the insight rules share: the rules' descriptors (defined one per file) and small helpers to
// build evidence from trace rows. Internal to insights/. Owner: trace.
#pragma once

#include <string>
#include <vector>

#include "trace/insights/projected_gain.h"
#include "trace/insights/rules.h"
#include "trace/results/insight.h"
#include "trace/results/report.h"

namespace vigil::trace {

// The rules' descriptors, each defined at the end of its own file.
extern const InsightRuleSpec kDataloaderBottleneckRule;
extern const InsightRuleSpec kLowGpuUtilizationRule;
extern const InsightRuleSpec kNoTensorCoresRule;
extern const InsightRuleSpec kLaunchBoundRule;
extern const InsightRuleSpec kExcessiveSyncRule;
extern const InsightRuleSpec kPageableMemcpyRule;
extern const InsightRuleSpec kExposedCommunicationRule;
extern const InsightRuleSpec kStragglerRule;
extern const InsightRuleSpec kMemoryNearCapacityRule;
extern const InsightRuleSpec kUnfusedOptimizerRule;

// Evidence pointing at one event row of a rank.
Evidence RowEvidence(const RankReport& r, std::string what, uint32_t row, double value = 0);
// The rank's analysed GPU span in ns (0 without GPU work).
int64_t SpanNs(const RankReport& r);
double Pct(double part, double whole);
std::string FormatMs(int64_t ns);

}  // namespace vigil::trace
