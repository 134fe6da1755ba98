// SPDX-License-Identifier: Apache-2.0
// The CPU-profile section (analysis/cpu_profile.h) in every output: the hottest host functions of
// a profile taken over the trace's window, shown after the idle-time breakdown.
// Owner: trace.
#pragma once

#include <string>

#include "trace/report/json_writer.h"
#include "trace/results/report.h"

namespace vigil::trace {

struct TextOptions;

void WriteCpuProfileJson(const RankReport& rank, JsonWriter* w);  // key "cpu_profile"
void RenderCpuProfileText(const RankReport& rank, const TextOptions& options, std::string* out);
void RenderCpuProfileHtml(const RankReport& rank, std::string* out);

}  // namespace vigil::trace
