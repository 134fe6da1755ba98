// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --html FILE`: one self-contained page (inline CSS and SVG, no network): the
// insights with their evidence, and per rank the GPU time breakdown, idle causes, a step
// timeline, top kernels, the memory timeline and the critical path summary. Pure function of a
// Report.
// Owner: trace.
#pragma once

#include <string>

#include "trace/analyzer.h"

namespace vigil::trace {

std::string RenderHtmlReport(const Report& report);

// Sections rendered by html_report_counters.cc: a rank's queue length and memory bandwidth
// tables, and the cross-rank critical path ("" for a single rank).
std::string HtmlCounters(const RankReport& rank);
std::string HtmlMultiRankPath(const Report& report);

// Escapes text for HTML element content and attribute values.
std::string HtmlEscape(std::string_view s);

}  // namespace vigil::trace
