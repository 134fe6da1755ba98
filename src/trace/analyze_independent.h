// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --independent`: each file analysed on its own, as its own job, one summary each,
// and with --json/--html/--perfetto one report per file. OUT.html gives OUT-<stem>.html per input
// file (the stem: its name without .gz and .json); an OUT that is an existing directory or ends
// with '/' (made when missing) gives DIR/<stem>.html (.json, .perfetto.json). Two inputs with one
// stem would write the same report: refused (exit 2, both named) before anything is read, as are
// report paths that cannot be written. Owner: trace. Called from RunAnalyze only; single-threaded.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/analyze_inputs.h"
#include "trace/analyze_main.h"
#include "trace/insights/rules.h"

namespace vigil::trace {

// "rank-0.pt.trace" for ".../rank-0.pt.trace.json.gz".
std::string TraceStem(std::string_view file);

// The report of input `file` for an output flag given `out`; `dir_ext` names the file in a
// directory (".html").
std::string PerFileOutputPath(const std::string& out, const std::string& file,
                              std::string_view dir_ext);

// The per-file outputs' checks (collisions, writable paths): 0, or 2 after saying why on `err`.
int CheckPerFileOutputs(const TraceInputs& inputs, const AnalyzeOptions& o, FILE* err);

// Reads one file's traces (with RunAnalyze's progress bar).
using TraceLoader = std::function<StatusOr<std::vector<RankTrace>>(const TraceInputs&)>;

// Analyses each file on its own, prints its summary (unless quiet) and writes its reports,
// naming each path written on `out`. The exit code: 0, or the largest of the files' codes (1 for
// a file that could not be read or a report not written, else what each_report returned).
int RunIndependent(const TraceInputs& inputs, const AnalyzeOptions& o, const AnalysisConfig& config,
                   const InsightThresholds& thresholds, const TraceLoader& load, FILE* out,
                   FILE* err);

}  // namespace vigil::trace
