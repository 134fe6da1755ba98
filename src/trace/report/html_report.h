// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --html FILE`: one self-contained page (inline CSS and SVG, no network): the
// insights with their evidence, and per rank the GPU time breakdown, idle causes, a step
// timeline, top kernels, the memory timeline and the critical path summary. Pure function of a
// Report.
// Owner: trace.
#pragma once

#include <string>

#include "trace/results/report.h"

namespace vigil::trace {

std::string RenderHtmlReport(const Report& report);

// Escapes text for HTML element content and attribute values.
std::string HtmlEscape(std::string_view s);

}  // namespace vigil::trace
