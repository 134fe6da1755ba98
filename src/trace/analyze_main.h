// SPDX-License-Identifier: Apache-2.0
// The whole of `vigil analyze` behind its command-line flags: read the trace(s) (with a progress
// bar on a terminal), analyse, print the summary and write the requested outputs. The CLI
// subcommand (src/cli/analyze_command.cc) only parses flags into AnalyzeOptions.
// Owner: trace.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/analysis/analysis_config.h"
#include "trace/insights/rules.h"

namespace vigil::trace {

struct AnalyzeOptions {
  std::string input;                     // a trace file, a directory of per-rank files or a glob
  std::vector<std::string> more_inputs;  // further files, directories or globs, of the same job
  // --independent: each file analysed on its own (one summary and one set of reports each,
  // analyze_independent.h) instead of as one job's ranks.
  bool independent = false;
  // With --independent: called after each file's analysis with the file and its JSON report;
  // the exit code it returns counts as that file's (`vigil analyze --upload` sends each report).
  std::function<int(const std::string& file, const std::string& json_report)> each_report;
  // --same-job: the files are known to be one job's (vigil-fleet collects them per job): skip the
  // check that refuses traces of different jobs.
  bool same_job = false;
  std::string json_path;                // --json
  std::string html_path;                // --html
  std::string perfetto_path;            // --perfetto
  std::string merge_snoop_path;         // --merge-snoop: a `vigil snoop --chrome-trace` file
  std::string diff_path;                // --diff: a second trace/directory to compare against
  std::string kernel_patterns_path;     // --kernel-patterns
  std::string graph_captures_path;      // --graph-captures: a capture trace or their folder
  std::string cpu_profile_path;         // --cpu-profile: `vigil profile --json` of the window
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

// Returns the process exit code: 0 ok, 1 failed (message on `err`), 2 usage (also: output paths
// that cannot be written, checked before reading, and inputs that are not one job's traces).
int RunAnalyze(const AnalyzeOptions& options, FILE* out, FILE* err);

}  // namespace vigil::trace
