// SPDX-License-Identifier: Apache-2.0
// Builds ranks' traces, reads them back through the reader and analyses them, keeping the traces
// beside the report that points into them. Owner: trace. Test-only.
#pragma once

#include <memory>
#include <vector>

#include "trace/results/report.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace::testing {

struct Analysed {
  std::vector<RankTrace> traces;
  Report report;  // Must not outlive `traces`.
  const RankReport& rank(size_t i = 0) const { return report.ranks[i]; }
};

// Writes each builder as rank-<i>.json, reads the directory and analyses it.
std::unique_ptr<Analysed> AnalyseRanks(const std::vector<TraceBuilder>& ranks,
                                       const AnalysisConfig& config = {});

}  // namespace vigil::trace::testing
