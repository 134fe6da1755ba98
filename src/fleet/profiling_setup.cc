// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_setup.h"

#include <algorithm>
#include <tuple>

#include <CLI/CLI.hpp>

#include "base/logging.h"
#include "base/time_util.h"
#include "fleet/analysis_store.h"

namespace vigil {

void AddProfilingFlags(CLI::App* serve, ProfilingFlags* f) {
  serve->add_option("--profiling", f->mode, "Fleet profiling: off|manual|auto")
      ->capture_default_str();
  serve->add_option("--daemon-token-file", f->daemon_token_file,
                    "Lines \"HOST TOKEN\" (\"*\" for any host): the control token of each vigild");
  serve->add_option("--profiling-trace-dir", f->trace_dir,
                    "Where uploaded traces go (default: traces/ beside --db)");
  serve
      ->add_option("--profiling-budget-per-hour", f->budget_per_hour,
                   "Automatic profiling requests per hour, fleet-wide")
      ->capture_default_str();
  serve
      ->add_option("--profiling-busy-below", f->busy_below,
                   "Automatic: mean busy ratio under this is low utilisation")
      ->capture_default_str();
  serve
      ->add_option("--profiling-max-stddev", f->max_stddev,
                   "Automatic: per-minute busy ratios this stable are a steady state")
      ->capture_default_str();
  serve
      ->add_option("--profiling-min-running", f->min_running,
                   "Automatic: a job must have run this long")
      ->capture_default_str();
  serve->add_option("--profiling-window", f->window, "Automatic: the window judged")
      ->capture_default_str();
  serve
      ->add_option("--profiling-collect-deadline", f->collect_deadline,
                   "Analyse what arrived this long after the traces started")
      ->capture_default_str();
  serve->add_option("--profiling-duration-ms", f->duration_ms, "Trace length of a request")
      ->capture_default_str();
}

StatusOr<ProfilingStack> StartProfiling(const ProfilingFlags& f, LedgerStore* store,
                                        FleetServerOptions* server_options) {
  ProfilingStack stack;
  VIGIL_ASSIGN_OR_RETURN(ProfilingMode mode, ParseProfilingMode(f.mode));
  if (mode == ProfilingMode::kOff) return stack;
  ProfilingOptions o;
  o.mode = mode;
  o.daemon_token_file = f.daemon_token_file;
  o.trace_dir = f.trace_dir;
  o.default_duration_ms = f.duration_ms;
  StatusOr<int64_t> collect = ParseDuration(f.collect_deadline);
  if (!collect.ok() || *collect <= 0) {
    return InvalidArgumentError("--profiling-collect-deadline: want a duration like 10m");
  }
  o.collect_deadline_ns = *collect;
  o.store_analysis = [store](const AnalysisUpload& upload) {
    return StoreAnalysis(*store, upload);
  };
  VIGIL_ASSIGN_OR_RETURN(stack.service, ProfilingService::Create(o, store));
  server_options->profiling = stack.service.get();
  server_options->max_body_bytes = std::max(server_options->max_body_bytes, o.max_file_bytes);
  if (mode == ProfilingMode::kAuto) {
    ProfilingTriggerOptions t;
    t.max_per_hour = f.budget_per_hour;
    t.busy_below = f.busy_below;
    t.max_stddev = f.max_stddev;
    t.duration_ms = f.duration_ms;
    for (auto [text, out, name] :
         {std::tuple{&f.min_running, &t.min_running_ns, "--profiling-min-running"},
          std::tuple{&f.window, &t.window_ns, "--profiling-window"}}) {
      StatusOr<int64_t> d = ParseDuration(*text);
      if (!d.ok() || *d < 60LL * 1000000000) {
        return InvalidArgumentError(std::string(name) + ": want a duration of at least 1m");
      }
      *out = *d;
    }
    stack.triggers = std::make_unique<ProfilingTriggers>(t, store, stack.service.get());
    stack.triggers->Start();
  }
  VIGIL_LOG_INFO("profiling: mode={} budget_per_hour={} busy_below={}", f.mode, f.budget_per_hour,
                 f.busy_below);
  return stack;
}

}  // namespace vigil
