// SPDX-License-Identifier: Apache-2.0
// The registry of analyses: one row per analysis, with the function that computes it and the
// writers that render it in JSON, on the terminal and in HTML (nullptr where an output does not
// show it). Adding an analysis is its own file, a field in results/report.h and one row here.
// Rows are in computing order, which is also the order of the JSON keys; the terminal page and the
// HTML page order their sections for reading (text_order, html_order).
// Owner: trace. Immutable static data; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/results/report.h"

namespace vigil::trace {

class InsightThresholds;
class JsonWriter;
struct TextOptions;

// An analysis of one rank. `compute` reads the rank's trace and the GpuView already in `out`
// (nullptr for a result another row's compute fills, when both share an expensive input).
struct RankAnalysis {
  std::string_view name;
  void (*compute)(const RankTrace& trace, const AnalysisConfig& config, RankReport* out);
  void (*json)(const RankReport& rank, JsonWriter* w);
  void (*text)(const RankReport& rank, const TextOptions& options, std::string* out);
  void (*html)(const RankReport& rank, std::string* out);
  int text_order;  // position of the text section in the rank's block (when `text` is set)
  int html_order;  // position of the HTML section in the rank's part of the page
};

// An analysis across ranks, run after every rank's analyses.
struct ReportAnalysis {
  std::string_view name;
  void (*compute)(const std::vector<RankTrace>& traces, const InsightThresholds& thresholds,
                  Report* report);
  void (*json)(const Report& report, JsonWriter* w);
  void (*text)(const Report& report, const TextOptions& options, std::string* out);
  void (*html)(const Report& report, std::string* out);
};

std::span<const RankAnalysis> RankAnalyses();
std::span<const ReportAnalysis> ReportAnalyses();
// The rank analyses that have a text (HTML) section, in text (HTML) order.
const std::vector<const RankAnalysis*>& RankAnalysesInTextOrder();
const std::vector<const RankAnalysis*>& RankAnalysesInHtmlOrder();

}  // namespace vigil::trace
