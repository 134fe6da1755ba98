// SPDX-License-Identifier: Apache-2.0
// % of roofline (analysis/roofline.h) in the three report formats: the rank's `roofline` JSON
// object (json_roofline.cc), its text lines (text_roofline.cc) and the HTML roofline chart
// (html_roofline.cc). Each writer calls its function with one line.
// Owner: trace.
#pragma once

#include <string>

#include "trace/report/json_writer.h"
#include "trace/results/report.h"

namespace vigil::trace {

// "roofline": {...} inside a rank object; nothing when the analysis was turned off.
void WriteRooflineJson(const RankReport& rank, JsonWriter* w);
// Appends the rank's roofline lines (two-space indented) to `out`; nothing without kernels.
void RenderRooflineText(const RankReport& rank, std::string* out);
// The rank's roofline section: figures and a chart of arithmetic intensity against achieved
// FLOP/s, one point per operator shape sized by its kernel time, under the memory and compute
// roofs. "" when there is nothing to show.
std::string HtmlRoofline(const RankReport& rank);

}  // namespace vigil::trace
