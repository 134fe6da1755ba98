// SPDX-License-Identifier: Apache-2.0
// An insight: one finding of the rule engine, with the evidence behind it (events, steps or
// ranks, with timestamps), the estimated gain and the fix. Rules live one per file in insights/
// and are listed in insights/rules.cc. Plain value types.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::trace {

enum class Severity : uint8_t { kInfo, kWarning, kCritical };
std::string_view SeverityName(Severity s);

struct Evidence {
  std::string what;  // "kernel", "step", "rank", "runtime call", "memcpy", ...
  std::string name;  // the event name, or a description
  int32_t rank = -1;
  int64_t ts_ns = 0;  // trace clock (add the rank's baseTimeNanoseconds for Unix time)
  int64_t dur_ns = 0;
  double value = 0;  // the number that made it evidence (gap, bytes, ratio, ...)
};

struct Insight {
  std::string id;  // "launch_bound", ...
  Severity severity = Severity::kInfo;
  std::string title;
  std::string detail;
  std::vector<Evidence> evidence;
  double estimated_gain_pct = 0;  // of the analysed GPU time
  std::string recommendation;
};

}  // namespace vigil::trace
