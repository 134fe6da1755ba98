// SPDX-License-Identifier: Apache-2.0
// `vigil analyze TRACE|DIR`: analyses PyTorch (Kineto) traces offline; needs no daemon. The work
// is in src/trace (RunAnalyze); this file only maps flags to AnalyzeOptions.
#include <cstdio>
#include <memory>

#include "cli/cli_context.h"
#include "trace/analyze_main.h"

namespace vigil {

void AddAnalyzeCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<trace::AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Analyse PyTorch profiler traces: breakdowns, idle causes, insights");
  cmd->add_option("trace", opts->input, "Kineto trace (.json or .json.gz) or a directory of ranks")
      ->required();
  cmd->add_option("--json", opts->json_path,
                  "Write the JSON report (schema 1) to FILE ('-': stdout)");
  cmd->add_option("--html", opts->html_path, "Write a self-contained HTML report to FILE");
  cmd->add_option("--perfetto", opts->perfetto_path,
                  "Write an augmented trace for Perfetto UI (counters, critical path) to FILE");
  cmd->add_option("--diff", opts->diff_path, "Compare with a second trace or directory");
  cmd->add_flag("--hta-compat", opts->hta_compat,
                "Reproduce Holistic Trace Analysis' numbers (drops the last step, rounds to us)");
  cmd->add_option("--kernel-patterns", opts->kernel_patterns_path,
                  "File of kernel classification rules: '<comm|memory|compute|other> "
                  "<prefix|contains|suffix> TEXT' per line");
  cmd->add_option("--threshold", opts->thresholds,
                  "Override an insight/analysis threshold: name=value (repeatable)");
  cmd->add_option("--threads", opts->threads, "Threads for reading ranks (0: all cores)");
  cmd->add_flag("-q,--quiet", opts->quiet, "No summary on stdout");
  cmd->callback(
      [&ctx, opts] { RunCommand(ctx, [&] { return trace::RunAnalyze(*opts, stdout, stderr); }); });
}

}  // namespace vigil
