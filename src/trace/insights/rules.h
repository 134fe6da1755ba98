// SPDX-License-Identifier: Apache-2.0
// The rule engine: every insight rule, in a fixed order (one rule per file in this directory).
// Owner: trace.
#pragma once

#include <vector>

#include "trace/insights/insight.h"

namespace vigil::trace {

struct Report;

std::vector<Insight> RunInsightRules(const Report& report, const InsightThresholds& thresholds);

}  // namespace vigil::trace
