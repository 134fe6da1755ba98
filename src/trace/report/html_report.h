// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --html FILE`: one self-contained page (inline CSS, SVG and one script, no
// network): the insights grouped by cause with their evidence, the rank comparison, and per rank
// the GPU time breakdown, idle causes, a step timeline, top kernels, the memory timeline, the
// critical path summary and a zoomable GPU timeline. Pure function of a Report.
// Owner: trace.
#pragma once

#include <string>

#include "base/strings.h"  // HtmlEscape, for the section writers
#include "trace/results/report.h"

namespace vigil::trace {

std::string RenderHtmlReport(const Report& report);

}  // namespace vigil::trace
