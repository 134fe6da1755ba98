// SPDX-License-Identifier: Apache-2.0
// The what-if lines of the terminal summary: each projection's step time and gain.
#include <fmt/format.h>

#include "trace/report/text_report.h"
#include "trace/report/what_if_report.h"

namespace vigil::trace {
namespace {

std::string Projections(const std::vector<WhatIfResult>& ps) {
  std::string s;
  for (const WhatIfResult& p : ps) {
    if (!p.valid) continue;
    s += fmt::format("{}{} -> {} (-{:.1f}%, {} events moved onto the path)", s.empty() ? "" : "; ",
                     p.name.rfind("comm_", 0) == 0 ? "communication_" + p.name.substr(5) : p.name,
                     FormatDuration(p.projected_ns), p.GainPct(), p.moved.size());
  }
  return s;
}

}  // namespace

void AppendRankWhatIfText(const RankReport& r, std::string* out) {
  const WhatIfReport& x = r.what_if;
  const std::string s = Projections(x.projections);
  if (s.empty()) return;
  *out += "  what-if: " + s + "\n";
  *out += fmt::format("  device timeline without idle gaps: {}\n",
                      FormatDuration(x.replayed_device_ns));
}

void AppendMultiRankWhatIfText(const Report& report, std::string* out) {
  const std::string s = Projections(report.multi_path.what_if);
  if (!s.empty()) *out += "  what-if: " + s + "\n";
}

}  // namespace vigil::trace
