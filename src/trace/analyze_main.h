// SPDX-License-Identifier: Apache-2.0
// The whole of `vigil analyze` behind its command-line flags: read the trace(s) (with a progress
// bar on a terminal), analyse, print the summary and write the requested outputs. The CLI
// subcommand (src/cli/analyze_command.cc) only parses flags into AnalyzeOptions.
// Owner: trace.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/analysis/analysis_config.h"
#include "trace/insights/rules.h"

namespace vigil::trace {

struct AnalyzeOptions {
  std::string input;                    // a trace file or a directory of per-rank files
  std::string json_path;                // --json
  std::string html_path;                // --html
  std::string perfetto_path;            // --perfetto
  std::string diff_path;                // --diff: a second trace/directory to compare against
  std::string kernel_patterns_path;     // --kernel-patterns
  std::string graph_captures_path;      // --graph-captures: a capture trace or their folder
  std::vector<std::string> thresholds;  // --threshold name=value
  bool hta_compat = false;              // --hta-compat
  bool no_roofline = false;             // --no-roofline
  bool quiet = false;                   // --quiet: no summary on stdout
  int threads = 0;                      // --threads (0: all cores)
  int progress = -1;  // --progress: 1 always (at once), 0 never, -1 on a terminal after 1 s
  // --what-if: "attention=2x,gemm=1.5x" (analysis/what_if.h)
  std::string what_if;
};

// Applies "name=value" to the thresholds (names as the insight rules declare them and
// AnalysisConfig, see docs/trace-json-schema.md). InvalidArgument for an unknown name or a bad
// value.
Status ApplyThreshold(std::string_view assignment, AnalysisConfig* config,
                      InsightThresholds* thresholds);

// Returns the process exit code: 0 ok, 1 failed (message on `err`), 2 usage.
int RunAnalyze(const AnalyzeOptions& options, FILE* out, FILE* err);

}  // namespace vigil::trace
