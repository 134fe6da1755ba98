// SPDX-License-Identifier: Apache-2.0
// The terminal summary of `vigil analyze`: a page a person reads in 30 seconds (per rank: where
// GPU time goes, why it idles, top kernels, launches/syncs/copies, critical path, launch queue
// and copy bandwidth; with several ranks the cross-rank critical path; then the insights with
// their evidence and fix; then data quality). Pure function of a Report.
// Owner: trace.
#pragma once

#include <string>

#include "trace/results/report.h"

namespace vigil::trace {

class DisplayNames;

struct TextOptions {
  size_t max_ranks = 8;  // ranks shown in detail (the rest in the cross-rank table)
  size_t top_kernels = 5;
  size_t max_insights = 10;
  // Set by RenderTextSummary: one set of display names for the whole page, so that no two
  // different kernel names read the same.
  DisplayNames* names = nullptr;
};

std::string RenderTextSummary(const Report& report, const TextOptions& options = {});

// "12.35 ms", "830.00 us", "1.20 s".
std::string FormatDuration(int64_t ns);
// A trace-clock time in microseconds with 3 decimals, exactly as JSON writes it: "1234.567".
std::string FormatMicros(int64_t ns);

// The text of the "Data quality:" section: "ok", or per rank each problem (model/data_problems.h)
// with the analyses it invalidates.
std::string RenderDataProblems(const Report& report);

}  // namespace vigil::trace
