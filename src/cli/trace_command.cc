// SPDX-License-Identifier: Apache-2.0
// `vigil trace`: on-demand Kineto traces of running PyTorch jobs on one host or many. Every
// `dyno gputrace` option is accepted; hosts come from --hosts (SLURM host-list syntax, host:port
// entries), --hostfile or --slurm-job. Requests fan out in parallel (bounded, each host with its
// own deadline) and carry one synchronised start time in the future. Against vigild it uses
// vigilTraceStart (trace ids, states, file paths); against a plain Dynolog daemon it falls back
// to setKinetOnDemandRequest and reports what Dynolog can tell. --wait follows every session to
// completion and prints a per-host table. Protocol: docs/protocols.md, "Trace sessions".
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/host_list.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/reply.h"
#include "cli/trace_cpu_profile.h"
#include "cli/trace_host_result.h"
#include "cli/trace_wait.h"

namespace vigil {
namespace {

// The key vigild adds to a setKinetOnDemandRequest reply whose log path it moved into its trace
// root (docs/protocols.md, "setKinetOnDemandRequest").
constexpr const char* kRewrittenLogFilesKey = "vigilRewrittenLogFiles";

StatusOr<std::vector<int64_t>> ParsePids(const std::string& text) {
  std::vector<int64_t> out;
  for (std::string_view part : Split(text, ',')) {
    part = Trim(part);
    if (part.empty()) {
      continue;
    }
    auto v = ParseInt64(part);
    if (!v || *v < 0 || *v > 0x7fffffff) {
      return InvalidArgumentError(fmt::format("--pids: '{}' is not a pid", part));
    }
    out.push_back(*v);
  }
  return out;
}

struct SlurmJob {
  std::string job_id;  // JobId= (an array task's own id, as its cgroup names it).
  std::vector<std::string> hosts;
};

// `scontrol show job -o J`: JobId= and NodeList=, the list expanded with our SLURM parser.
StatusOr<SlurmJob> ResolveSlurmJob(const std::string& job) {
  if (job.empty() || !std::all_of(job.begin(), job.end(),
                                  [](char c) { return (c >= '0' && c <= '9') || c == '_'; })) {
    return InvalidArgumentError("--slurm-job must be a SLURM job id (digits, or JOB_TASK)");
  }
  FILE* pipe = popen(("scontrol show job -o " + job + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    return UnavailableError("cannot run scontrol");
  }
  std::string text;
  char buf[4096];
  size_t n;
  while (text.size() < (1 << 20) && (n = fread(buf, 1, sizeof(buf), pipe)) > 0) {
    text.append(buf, n);
  }
  const int rc = pclose(pipe);
  if (rc != 0 || text.empty()) {
    return UnavailableError("scontrol show job " + job + " failed (is SLURM installed here?)");
  }
  SlurmJob out;
  std::string nodes;
  std::string_view line = text;
  line = line.substr(0, line.find('\n'));  // The first job (an array lists one per task).
  for (std::string_view field : SplitWhitespace(line)) {
    if (field.starts_with("JobId=")) {
      out.job_id = std::string(field.substr(6));
    } else if (field.starts_with("NodeList=")) {
      nodes = std::string(field.substr(9));
    }
  }
  if (out.job_id.empty()) {
    out.job_id = job;
  }
  if (nodes.empty() || nodes == "(null)") {
    return NotFoundError(
        fmt::format("scontrol names no nodes for SLURM job {} (pending, or finished?)", job));
  }
  VIGIL_ASSIGN_OR_RETURN(out.hosts, ExpandHostList(nodes));
  return out;
}

// Hosts from --hosts, --hostfile and --slurm-job (default: the global --host). --slurm-job also
// sets the job to match, as each daemon resolves its processes' jobs (the job's cgroup).
StatusOr<std::vector<std::string>> ResolveTraceHosts(TraceCliOptions& opts, const CliContext& ctx) {
  std::vector<std::string> hosts;
  if (!opts.hosts.empty()) {
    VIGIL_ASSIGN_OR_RETURN(hosts, ExpandHostList(opts.hosts));
  }
  if (!opts.hostfile.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> more, ReadHostFile(opts.hostfile));
    hosts.insert(hosts.end(), more.begin(), more.end());
  }
  if (!opts.slurm_job.empty()) {
    VIGIL_ASSIGN_OR_RETURN(SlurmJob job, ResolveSlurmJob(opts.slurm_job));
    if (!opts.job_id.empty() && opts.job_id != job.job_id) {
      return InvalidArgumentError(fmt::format("--job-id {} and --slurm-job {} (job {}) disagree",
                                              opts.job_id, opts.slurm_job, job.job_id));
    }
    opts.job_id = job.job_id;
    hosts.insert(hosts.end(), job.hosts.begin(), job.hosts.end());
  }
  if (hosts.empty()) {
    hosts.push_back(ctx.Target());  // The one daemon the global options name.
  }
  return hosts;
}

std::string DynologConfig(const TraceCliOptions& o, const std::string& log_file) {
  std::string trigger = o.iterations > 0
                            ? fmt::format(
                                  "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP={}\n"
                                  "ACTIVITIES_ITERATIONS={}",
                                  o.profile_start_iteration_roundup, o.iterations)
                            : fmt::format("PROFILE_START_TIME={}\nACTIVITIES_DURATION_MSECS={}",
                                          o.profile_start_time, o.duration_ms);
  return fmt::format(
      "ACTIVITIES_LOG_FILE={}\n{}\nPROFILE_REPORT_INPUT_SHAPES={}\nPROFILE_PROFILE_MEMORY={}\n"
      "PROFILE_WITH_STACK={}\nPROFILE_WITH_FLOPS={}\nPROFILE_WITH_MODULES={}",
      log_file, trigger, o.record_shapes, o.profile_memory, o.with_stacks, o.with_flops,
      o.with_modules);
}

void TraceOneHost(const CliContext& ctx, const TraceCliOptions& o, const std::vector<int64_t>& pids,
                  HostTraceResult* r) {
  auto reply = ctx.Call(VigilTraceStartRequest(o, pids));
  if (reply.ok()) {
    r->reached = true;
    ReadVigilStart(*reply, r);
    return;
  }
  const StatusCode code = reply.status().code();
  if (code != StatusCode::kUnimplemented && code != StatusCode::kDataLoss) {
    r->reached = code == StatusCode::kFailedPrecondition;
    r->error = reply.status().message();
    return;
  }
  // A plain Dynolog daemon: the same request in its own terms.
  int64_t job = 0;
  if (!o.job_id.empty()) {
    auto numeric = ParseInt64(o.job_id);
    if (!numeric) {
      r->reached = true;
      r->error = "Dynolog daemon: job ids must be integers";
      return;
    }
    job = *numeric;
  }
  const std::string log_file = o.log_file.empty() ? "/tmp/vigil_trace.json" : o.log_file;
  nlohmann::json dyno{{"fn", "setKinetOnDemandRequest"},
                      {"config", DynologConfig(o, log_file)},
                      {"job_id", job},
                      {"pids", pids},
                      {"process_limit", o.process_limit}};
  auto answer = ctx.Call(dyno);
  if (!answer.ok()) {
    r->error = answer.status().message();
    return;
  }
  r->reached = true;
  r->dynolog = true;
  r->done = true;
  r->log_file = log_file;
  if (!JsonString(*answer, "status").empty()) {
    r->error = "Dynolog: " + JsonString(*answer, "status");
    return;
  }
  r->matched = static_cast<int64_t>(JsonArray(*answer, "processesMatched").size());
  r->busy_count = static_cast<int64_t>(JsonNumber(*answer, "activityProfilersBusy"));
  // A vigild answering as Dynolog says where the files really go when it moved them.
  const nlohmann::json& moved = JsonObject(*answer, kRewrittenLogFilesKey);
  if (!JsonString(moved, "log_file").empty()) {
    r->log_file = JsonString(moved, "log_file");
    r->log_note = JsonString(moved, "note");
  }
  for (const nlohmann::json& pid : JsonArray(*answer, "activityProfilersTriggered")) {
    const int64_t p = pid.is_number() ? pid.get<int64_t>() : 0;
    std::string path = log_file;
    if (size_t at = path.find(".json"); at != std::string::npos) {
      path.replace(at, 5, fmt::format("_{}.json", p));
    }
    for (const nlohmann::json& f : JsonArray(moved, "files")) {
      if (f.value("pid", int64_t{-1}) == p) {
        path = JsonString(f, "path");
      }
    }
    r->processes.push_back(ProcessOutcome{p, "triggered", path, -1, "", ""});
  }
  r->triggered = static_cast<int64_t>(r->processes.size());
  if (r->matched == 0) {
    r->why_nothing = "Dynolog matched no process (it cannot say why); check --job-id and --pids";
  }
}

std::vector<HostTraceResult> FanOutTrace(const CliContext& ctx, const TraceCliOptions& o,
                                         const std::vector<std::string>& hosts,
                                         const std::vector<int64_t>& pids) {
  std::vector<HostTraceResult> results(hosts.size());
  ForEachTraceHost(hosts.size(), o.parallel, [&](size_t i) {
    results[i].host = hosts[i];
    TraceOneHost(TraceHostContext(ctx, hosts[i], ctx.TimeoutNs()), o, pids, &results[i]);
  });
  return results;
}

// On stderr, what the request matched against and each daemon's reason, when matching nothing
// fails the command: --wait that matched nothing anywhere, or --fail-on-no-process.
void ReportNoMatch(const std::vector<HostTraceResult>& results, const TraceCliOptions& o) {
  const bool none = TotalMatched(results) == 0;
  if (!(o.wait && none) && !o.fail_on_no_process) {
    return;
  }
  if (none) {
    std::fprintf(stderr, "vigil trace: no process matched %s\n",
                 MatchedAgainst(o, results.size()).c_str());
  }
  for (const HostTraceResult& r : results) {
    if (r.reached && r.error.empty() && r.matched == 0) {
      std::fprintf(stderr, "vigil trace: %s: nothing matched: %s\n", r.host.c_str(),
                   r.why_nothing.empty() ? "the daemon gave no reason" : r.why_nothing.c_str());
    }
  }
}

int RunTrace(CliContext& ctx, TraceCliOptions& opts) {
  auto hosts = ResolveTraceHosts(opts, ctx);
  if (!hosts.ok()) {
    std::fprintf(stderr, "vigil trace: %s\n", hosts.status().message().c_str());
    return kExitUsage;
  }
  if (opts.retry_busy && !opts.wait) {
    std::fprintf(stderr, "vigil trace: --retry-busy waits for busy processes: give --wait too\n");
    return kExitUsage;
  }
  if (opts.iterations <= 0 && opts.duration_ms <= 0) {
    std::fprintf(stderr, "vigil trace: --duration-ms must be positive (or give --iterations)\n");
    return kExitUsage;
  }
  if (!opts.cpu_profile_path.empty() && opts.iterations > 0) {
    std::fprintf(stderr,
                 "vigil trace: --with-cpu-profile needs a time window: give --duration-ms, not "
                 "--iterations\n");
    return kExitUsage;
  }
  // One absolute start time for every host, far enough ahead for the fan-out and Kineto's poll.
  if (opts.iterations <= 0 && opts.profile_start_time == 0 &&
      (hosts->size() > 1 || opts.start_delay_ms > 0 || !opts.cpu_profile_path.empty())) {
    const int64_t delay = opts.start_delay_ms > 0 ? opts.start_delay_ms : 10000;
    opts.profile_start_time = UnixNanos() / kNanosPerMilli + delay;
  }
  auto pids = ParsePids(opts.pids);
  if (!pids.ok()) {
    std::fprintf(stderr, "vigil trace: %s\n", pids.status().message().c_str());
    return kExitUsage;
  }
  std::vector<HostTraceResult> results = FanOutTrace(ctx, opts, *hosts, *pids);
  std::string profile_note;
  if (!opts.cpu_profile_path.empty()) {
    TraceCpuProfileRequest pr;
    for (const HostTraceResult& r : results) {
      if (r.reached && !r.dynolog && r.matched > 0) pr.hosts.push_back(r.host);
    }
    pr.job_id = opts.job_id;
    for (int64_t pid : *pids) {
      if (pid > 0) pr.pids.push_back(static_cast<int>(pid));
    }
    pr.start_unix_ms = opts.profile_start_time;
    pr.duration_ms = opts.duration_ms;
    pr.path = opts.cpu_profile_path;
    if (pr.hosts.empty()) {
      profile_note = "cpu profile: not taken, no vigild host matched a process\n";
    } else if (pr.job_id.empty() && pr.pids.empty()) {
      profile_note = "cpu profile: not taken, give --job-id or --pids to say whose\n";
    } else {
      StatusOr<std::string> taken = TakeTraceCpuProfile(ctx, pr);
      profile_note = taken.ok() ? *taken : taken.status().message() + "\n";
    }
  }
  if (opts.wait) {
    WaitForTraces(ctx, opts, &results);
  }
  if (opts.json) {
    std::printf("%s\n", TraceResultsToJson(results).dump(2).c_str());
  } else {
    std::printf("%s", RenderTraceResults(results, opts.wait).c_str());
  }
  std::fputs(profile_note.c_str(), opts.json ? stderr : stdout);
  ReportNoMatch(results, opts);
  return TraceExitCode(results, opts);
}

}  // namespace

void AddTraceCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<TraceCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trace", "On-demand PyTorch (Kineto) trace of matching processes on one or many hosts");
  cmd->add_option("--job-id", opts->job_id, "Job id of the processes to trace (integer or string)");
  cmd->add_option("--pids", opts->pids, "Comma-separated pids (or ancestor pids); 0 = all")
      ->default_val("0");
  cmd->add_option("--duration-ms", opts->duration_ms, "Trace duration in ms")->default_val(500);
  cmd->add_option("--iterations", opts->iterations,
                  "Training iterations to trace; takes precedence over --duration-ms")
      ->default_val(-1);
  cmd->add_option("--log-file", opts->log_file,
                  "Trace file (the daemon keeps it under its --trace-root)");
  cmd->add_option("--profile-start-time", opts->profile_start_time,
                  "Unix time in ms at which every process starts tracing (0: chosen for you)")
      ->default_val(0);
  cmd->add_option("--profile-start-iteration-roundup", opts->profile_start_iteration_roundup,
                  "Start an iteration-based trace at a multiple of this")
      ->default_val(1);
  cmd->add_option("--process-limit", opts->process_limit, "Most processes to trace per host")
      ->default_val(3);
  cmd->add_flag("--record-shapes", opts->record_shapes, "Record operator input shapes");
  cmd->add_flag("--profile-memory", opts->profile_memory, "Profile PyTorch memory");
  cmd->add_flag("--with-stacks", opts->with_stacks, "Capture Python stacks");
  cmd->add_flag("--with-flops", opts->with_flops, "Annotate operators with analytical FLOPs");
  cmd->add_flag("--with-modules", opts->with_modules, "Record PyTorch module hierarchy");
  cmd->add_option("--hosts", opts->hosts,
                  "Hosts: node[01-64,70], 127.0.0.1:[1801-1832], comma lists (default: --host)");
  cmd->add_option("--hostfile", opts->hostfile, "File with one host (or host list) per line");
  cmd->add_option("--slurm-job", opts->slurm_job,
                  "Trace this SLURM job's processes on its nodes (scontrol show job)");
  cmd->add_option("--parallel", opts->parallel, "Hosts contacted at once")->default_val(64);
  cmd->add_option("--start-delay-ms", opts->start_delay_ms,
                  "Synchronised start this far in the future (default 10000 for several hosts)")
      ->default_val(0);
  cmd->add_flag("--wait", opts->wait,
                "Follow every trace to completion and print a table; exit 1 when nothing matched");
  cmd->add_flag("--retry-busy", opts->retry_busy,
                "With --wait: wait for processes busy with another trace (progress on stderr), "
                "then trace them");
  cmd->add_option("--wait-timeout", opts->wait_timeout, "Give up waiting after this")
      ->default_val("10m");
  cmd->add_option("--reason", opts->reason, "Why this trace is taken (kept in the audit log)");
  cmd->add_flag("--fail-on-no-process", opts->fail_on_no_process,
                "Exit 1 when no process matched on some host");
  cmd->add_flag("--json", opts->json, "Print the per-host results as JSON");
  cmd->add_option("--with-cpu-profile", opts->cpu_profile_path,
                  "Also sample the traced processes' CPU stacks over the trace's window (each "
                  "host's vigild) and write the merged profile to FILE, for vigil analyze "
                  "--cpu-profile");
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunTrace(ctx, *opts); }); });
}

}  // namespace vigil
