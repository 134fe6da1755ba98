// SPDX-License-Identifier: Apache-2.0
// `vigil analyze TRACE|DIR|GLOB...`: analyses PyTorch (Kineto) traces offline; needs no daemon. The
// work is in src/trace (RunAnalyze); this file only maps flags to AnalyzeOptions.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>
#if defined(__GLIBC__)  // defined once a C library header is in
#include <malloc.h>
#endif

#include "cli/analysis_upload.h"
#include "cli/cli_context.h"
#include "trace/analyze_main.h"

namespace vigil {

void AddAnalyzeCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<trace::AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Analyse PyTorch profiler traces: breakdowns, idle causes, insights");
  auto inputs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("trace", *inputs,
                  "Kineto traces (.json or .json.gz), directories of ranks or globs: the ranks of "
                  "one job (see --independent)")
      ->required();
  cmd->add_flag("--independent", opts->independent,
                "Analyse each file on its own, for traces of different jobs: one summary each, "
                "and one report each (--json/--html/--perfetto OUT.ext: OUT-<stem>.ext, or "
                "DIR/<stem>.ext for a directory)");
  cmd->add_flag("--same-job", opts->same_job,
                "The files are one job's: skip the check that refuses traces of different jobs");
  cmd->add_option("--json", opts->json_path,
                  "Write the JSON report (schema 1) to FILE ('-': stdout)");
  cmd->add_option("--html", opts->html_path, "Write a self-contained HTML report to FILE");
  cmd->add_option("--perfetto", opts->perfetto_path,
                  "Write an augmented trace for Perfetto UI (counters, critical path) to FILE");
  cmd->add_option("--merge-snoop", opts->merge_snoop_path,
                  "With --perfetto: add the CUDA calls of a `vigil snoop --chrome-trace` FILE, "
                  "aligned to the trace's clock");
  cmd->add_option("--diff", opts->diff_path, "Compare with a second trace or directory");
  cmd->add_flag("--hta-compat", opts->hta_compat,
                "Reproduce Holistic Trace Analysis' numbers (drops the last step, rounds to us)");
  cmd->add_flag("--no-roofline", opts->no_roofline,
                "Skip the work model and % of roofline (to measure what they cost)");
  cmd->add_option("--kernel-patterns", opts->kernel_patterns_path,
                  "File of kernel classification rules: '<comm|memory|compute|other> "
                  "<prefix|contains|suffix> TEXT' per line");
  cmd->add_option("--graph-captures", opts->graph_captures_path,
                  "Graph-capture trace(s) of the CUDA/HIP graphs the trace replays (a file, or a "
                  "folder with execution_details.json), so replayed kernels get their operators");
  cmd->add_option("--cpu-profile", opts->cpu_profile_path,
                  "A CPU profile of the traced processes over the same window (vigil profile "
                  "--json): its hottest functions are shown after the idle-time breakdown");
  cmd->add_option("--threshold", opts->thresholds,
                  "Override an insight/analysis threshold: name=value (repeatable)");
  cmd->add_option("--threads", opts->threads, "Threads for reading ranks (0: all cores)");
  cmd->add_option("--what-if", opts->what_if,
                  "Project the step with kernel categories faster: NAME=FACTORx[,...], e.g. "
                  "attention=2x");
  cmd->add_option_function<std::string>(
         "--progress",
         [opts](const std::string& v) {
           opts->progress = v == "always" ? 1 : v == "never" ? 0 : -1;
         },
         "Progress bar on stderr while reading: auto (on a terminal, reads over 1 s), always, "
         "never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("-q,--quiet", opts->quiet, "No summary on stdout");
  auto upload = std::make_shared<AnalysisUploadFlags>();
  AddAnalysisUploadFlags(cmd, upload.get());
  cmd->callback([&ctx, opts, upload, inputs] {
    opts->input = inputs->front();
    opts->more_inputs.assign(inputs->begin() + 1, inputs->end());
#if defined(__GLIBC__)
    // Tables and analysis buffers over 256 KiB get mappings of their own, returned to the system
    // when freed, instead of fragmenting the heap: ~10% less peak RSS on multi-GB traces.
    mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
    RunCommand(ctx, [&] { return AnalyzeAndUpload(ctx, *opts, *upload, stdout, stderr); });
  });
}

}  // namespace vigil
