// SPDX-License-Identifier: Apache-2.0
// Test helper: compares a rank analysed with --hta-compat against a Holistic Trace Analysis
// reference output (hta_reference/*.hta.json) and lists every value more than 0.5 % off. The
// queue length and memory bandwidth summaries are checked under both orders of events at equal
// times (HTA's unstable sort leaves that order open), the bandwidth on Kineto's recorded values
// (read from the trace file when the model does not carry them).
// Test-only.
// Owner: trace.
#pragma once

#include <string>
#include <vector>

#include "trace/results/report.h"

namespace vigil::trace::testing {

struct HtaComparison {
  bool loaded = false;
  std::vector<std::string> mismatches;
  std::vector<std::string> hta_errors;  // analyses HTA itself failed on ({"error": ...})
  int compared = 0;                     // number of values compared
};

HtaComparison CompareWithHta(const RankReport& rank, const std::string& reference_json_path);

}  // namespace vigil::trace::testing
