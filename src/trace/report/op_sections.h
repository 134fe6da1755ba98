// SPDX-License-Identifier: Apache-2.0
// The report sections of the operator analyses, in every output: per rank the GPU time per
// kernel category and the CPU operator / module breakdown (with the GPU time each launched), and
// the --diff comparison. The writers call these; each is a pure function of its input.
// Owner: trace.
#pragma once

#include <cstddef>
#include <string>

#include "trace/analysis/trace_diff.h"
#include "trace/report/json_writer.h"
#include "trace/results/report.h"

namespace vigil::trace {

// Rank keys "gpu_categories" and "cpu_ops" (json_cpu_ops.cc).
void WriteCpuOpsJson(const RankReport& rank, JsonWriter* w);
// The value of the top-level "diff" key (json_trace_diff.cc).
void WriteTraceDiffJson(const TraceDiff& diff, JsonWriter* w);

// A rank's category line and top `top` operators and modules for the terminal (text_cpu_ops.cc).
std::string RenderCpuOpsText(const RankReport& rank, size_t top);

// The HTML sections (html_cpu_ops.cc, html_trace_diff.cc).
std::string HtmlCpuOps(const RankReport& rank);
std::string HtmlTraceDiff(const TraceDiff& diff);

// Operators and modules written to JSON per rank (largest first); the rest are counted.
inline constexpr size_t kJsonCpuOpsLimit = 100;

}  // namespace vigil::trace
