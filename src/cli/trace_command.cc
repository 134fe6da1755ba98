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

namespace vigil {
namespace {

struct TraceCliOptions {
  std::string job_id;
  std::string pids = "0";
  int64_t duration_ms = 500;
  int64_t iterations = -1;
  std::string log_file;
  int64_t profile_start_time = 0;
  int64_t profile_start_iteration_roundup = 1;
  int process_limit = 3;
  bool record_shapes = false, profile_memory = false, with_stacks = false, with_flops = false,
       with_modules = false;
  std::string hosts, hostfile, slurm_job;
  int parallel = 64;
  int64_t start_delay_ms = 0;
  bool wait = false;
  std::string wait_timeout = "10m";
  std::string reason;
  bool fail_on_no_process = false;
  bool json = false;
  std::string cpu_profile_path;  // --with-cpu-profile
};

struct ProcessOutcome {
  int64_t pid = 0;
  std::string state;  // vigild's state, or "triggered"/"busy" for Dynolog.
  std::string path;
  int64_t size_bytes = -1;
  std::string reason;
};

struct HostTraceResult {
  std::string host;
  bool reached = false;
  bool dynolog = false;  // Answered through setKinetOnDemandRequest only.
  std::string error;
  std::string trace_id;
  std::string log_file;
  std::string log_note;
  int64_t matched = 0;
  int64_t triggered = 0;
  int64_t busy = 0;
  bool done = false;
  std::vector<ProcessOutcome> processes;
  std::string why_nothing;              // vigild's explanation when nothing matched.
  std::vector<std::string> registered;  // "pid (job)" of what the daemon knows.
};

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

// `scontrol show job -o J` -> NodeList=... expanded with our SLURM parser.
StatusOr<std::vector<std::string>> SlurmJobHosts(const std::string& job) {
  for (char c : job) {
    if (!((c >= '0' && c <= '9') || c == '_')) {
      return InvalidArgumentError("--slurm-job must be a SLURM job id");
    }
  }
  FILE* pipe = popen(("scontrol show job -o " + job + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) {
    return UnavailableError("cannot run scontrol");
  }
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) {
    text.append(buf, n);
  }
  const int rc = pclose(pipe);
  if (rc != 0 || text.empty()) {
    return UnavailableError("scontrol show job " + job + " failed (is SLURM installed here?)");
  }
  for (std::string_view field : SplitWhitespace(text)) {
    if (field.starts_with("NodeList=")) {
      return ExpandHostList(field.substr(9));
    }
  }
  return NotFoundError("scontrol gave no NodeList for job " + job);
}

StatusOr<std::vector<std::string>> ResolveTraceHosts(const TraceCliOptions& opts,
                                                     const CliContext& ctx) {
  std::vector<std::string> hosts;
  if (!opts.hosts.empty()) {
    VIGIL_ASSIGN_OR_RETURN(hosts, ExpandHostList(opts.hosts));
  }
  if (!opts.hostfile.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> more, ReadHostFile(opts.hostfile));
    hosts.insert(hosts.end(), more.begin(), more.end());
  }
  if (!opts.slurm_job.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> more, SlurmJobHosts(opts.slurm_job));
    hosts.insert(hosts.end(), more.begin(), more.end());
  }
  if (hosts.empty()) {
    hosts.push_back(ctx.Target());  // The one daemon the global options name.
  }
  return hosts;
}

CliContext ContextFor(const CliContext& ctx, const std::string& host, int64_t deadline_ns) {
  CliContext c = ctx;
  if (host != ctx.Target()) {
    c.host = host;
    c.unix_socket.clear();
  }
  c.timeout = fmt::format("{}ns", std::max<int64_t>(deadline_ns, kNanosPerMilli));
  return c;
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

void ReadVigilSession(const nlohmann::json& s, HostTraceResult* r) {
  r->trace_id = JsonString(s, "trace_id");
  r->log_file = JsonString(s, "log_file");
  r->log_note = JsonString(s, "log_file_note");
  r->done = s.value("done", false);
  r->processes.clear();
  for (const nlohmann::json& p : JsonArray(s, "processes")) {
    r->processes.push_back(ProcessOutcome{
        static_cast<int64_t>(JsonNumber(p, "pid")), JsonString(p, "state"), JsonString(p, "path"),
        static_cast<int64_t>(JsonNumber(p, "size_bytes", -1)), JsonString(p, "reason")});
  }
  r->busy = 0;
  for (const nlohmann::json& b : JsonArray(s, "busy")) {
    if (JsonString(b, "held_by") != "process_limit") {
      ++r->busy;
    }
  }
}

void TraceOneHost(const CliContext& ctx, const TraceCliOptions& o, const std::vector<int64_t>& pids,
                  HostTraceResult* r) {
  nlohmann::json req{{"fn", "vigilTraceStart"},
                     {"pids", pids},
                     {"process_limit", o.process_limit},
                     {"duration_ms", o.duration_ms},
                     {"iterations", o.iterations},
                     {"profile_start_time", o.profile_start_time},
                     {"profile_start_iteration_roundup", o.profile_start_iteration_roundup},
                     {"record_shapes", o.record_shapes},
                     {"profile_memory", o.profile_memory},
                     {"with_stacks", o.with_stacks},
                     {"with_flops", o.with_flops},
                     {"with_modules", o.with_modules}};
  if (!o.job_id.empty()) {
    req["job_id"] = o.job_id;
  }
  if (!o.log_file.empty()) {
    req["log_file"] = o.log_file;
  }
  if (!o.reason.empty()) {
    req["reason"] = o.reason;
  }
  auto reply = ctx.Call(req);
  if (reply.ok()) {
    r->reached = true;
    ReadVigilSession(*reply, r);
    r->matched = static_cast<int64_t>(JsonNumber(*reply, "matched"));
    r->triggered = static_cast<int64_t>(JsonNumber(*reply, "triggered"));
    const nlohmann::json& why = JsonObject(*reply, "why_nothing_matched");
    r->why_nothing = JsonString(why, "reason");
    for (const nlohmann::json& p : JsonArray(why, "registered")) {
      r->registered.push_back(fmt::format("{} (job {})", FormatValue(JsonNumber(p, "pid")),
                                          JsonString(p, "job_id", "?")));
    }
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
  r->busy = static_cast<int64_t>(JsonNumber(*answer, "activityProfilersBusy"));
  for (const nlohmann::json& pid : JsonArray(*answer, "activityProfilersTriggered")) {
    const int64_t p = pid.is_number() ? pid.get<int64_t>() : 0;
    std::string path = log_file;
    if (size_t at = path.find(".json"); at != std::string::npos) {
      path.replace(at, 5, fmt::format("_{}.json", p));
    }
    r->processes.push_back(ProcessOutcome{p, "triggered", path, -1, ""});
  }
  r->triggered = static_cast<int64_t>(r->processes.size());
  if (r->matched == 0) {
    r->why_nothing = "Dynolog matched no process (it cannot say why); check --job-id and --pids";
  }
}

// Runs fn(i) for every host index with at most `parallel` in flight.
void ForEachHost(size_t count, int parallel, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  const size_t n = std::min<size_t>(count, static_cast<size_t>(std::max(parallel, 1)));
  for (size_t w = 0; w < n; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) {
        fn(i);
      }
    });
  }
  for (std::thread& t : workers) {
    t.join();
  }
}

std::vector<HostTraceResult> FanOutTrace(const CliContext& ctx, const TraceCliOptions& o,
                                         const std::vector<std::string>& hosts,
                                         const std::vector<int64_t>& pids) {
  std::vector<HostTraceResult> results(hosts.size());
  ForEachHost(hosts.size(), o.parallel, [&](size_t i) {
    results[i].host = hosts[i];
    TraceOneHost(ContextFor(ctx, hosts[i], ctx.TimeoutNs()), o, pids, &results[i]);
  });
  return results;
}

void WaitForTraces(const CliContext& ctx, const TraceCliOptions& o,
                   std::vector<HostTraceResult>* results) {
  const int64_t limit = ParseDuration(o.wait_timeout).value_or(600 * kNanosPerSecond);
  const int64_t deadline = MonotonicNanos() + limit;
  while (MonotonicNanos() < deadline) {
    bool pending = false;
    ForEachHost(results->size(), o.parallel, [&](size_t i) {
      HostTraceResult& r = (*results)[i];
      if (r.done || r.trace_id.empty() || !r.error.empty()) {
        return;
      }
      auto s = ContextFor(ctx, r.host, ctx.TimeoutNs())
                   .Call(nlohmann::json{{"fn", "vigilTraceStatus"}, {"trace_id", r.trace_id}});
      if (s.ok()) {
        ReadVigilSession(*s, &r);
      }
    });
    for (const HostTraceResult& r : *results) {
      pending |= !r.done && !r.trace_id.empty() && r.error.empty();
    }
    if (!pending) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // Poll interval, not a fix.
  }
}

nlohmann::json TraceResultsToJson(const std::vector<HostTraceResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const HostTraceResult& r : results) {
    nlohmann::json procs = nlohmann::json::array();
    for (const ProcessOutcome& p : r.processes) {
      procs.push_back({{"pid", p.pid},
                       {"state", p.state},
                       {"path", p.path},
                       {"size_bytes", p.size_bytes},
                       {"reason", p.reason}});
    }
    out.push_back({{"host", r.host},
                   {"reached", r.reached},
                   {"daemon", r.dynolog ? "dynolog" : "vigild"},
                   {"error", r.error},
                   {"trace_id", r.trace_id},
                   {"log_file", r.log_file},
                   {"log_file_note", r.log_note},
                   {"matched", r.matched},
                   {"triggered", r.triggered},
                   {"busy", r.busy},
                   {"done", r.done},
                   {"why_nothing_matched", r.why_nothing},
                   {"registered", r.registered},
                   {"processes", procs}});
  }
  return out;
}

std::string RenderTraceResults(const std::vector<HostTraceResult>& results, bool waited) {
  TextTable table({"HOST", "TRACE", "MATCHED", "PID", "STATE", "FILE / REASON"});
  table.AlignRight(2);
  std::string notes;
  for (const HostTraceResult& r : results) {
    const std::string id = r.dynolog ? "(dynolog)" : r.trace_id;
    if (!r.error.empty()) {
      table.AddRow({r.host, "-", "-", "-", r.reached ? "error" : "unreachable", r.error});
      continue;
    }
    if (r.processes.empty()) {
      table.AddRow({r.host, id, std::to_string(r.matched), "-", "none",
                    r.why_nothing.empty() ? fmt::format("{} busy", r.busy) : r.why_nothing});
      if (!r.registered.empty()) {
        notes += fmt::format("{}: registered processes: {}\n", r.host, Join(r.registered, ", "));
      }
      continue;
    }
    for (const ProcessOutcome& p : r.processes) {
      std::string detail = p.path;
      if (p.size_bytes >= 0 && p.state == "written") {
        detail += " (" + FormatBytes(static_cast<double>(p.size_bytes)) + ")";
      }
      if (!p.reason.empty()) {
        detail = p.reason;
      }
      table.AddRow({r.host, id, std::to_string(r.matched), std::to_string(p.pid), p.state, detail});
    }
    if (!r.log_note.empty()) {
      notes += fmt::format("{}: {}\n", r.host, r.log_note);
    }
    if (r.busy > 0) {
      notes += fmt::format("{}: {} matching process(es) busy with another trace\n", r.host, r.busy);
    }
  }
  std::string out = table.Render() + notes;
  const bool any_session = std::any_of(
      results.begin(), results.end(), [](const HostTraceResult& r) { return !r.trace_id.empty(); });
  if (!waited && any_session) {
    out += "follow with --wait, or the vigilTraceStatus RPC with each trace id\n";
  }
  return out;
}

int TraceExitCode(const std::vector<HostTraceResult>& results, const TraceCliOptions& o) {
  bool any_reached = false;
  bool failure = false;
  for (const HostTraceResult& r : results) {
    any_reached |= r.reached;
    failure |= !r.error.empty();
    failure |= o.fail_on_no_process && r.matched == 0;
    for (const ProcessOutcome& p : r.processes) {
      failure |= o.wait && p.state != "written" && p.state != "triggered";
    }
  }
  if (!any_reached) {
    return kExitUnreachable;
  }
  return failure ? kExitFailure : kExitOk;
}

int RunTrace(CliContext& ctx, TraceCliOptions& opts) {
  auto hosts = ResolveTraceHosts(opts, ctx);
  if (!hosts.ok()) {
    std::fprintf(stderr, "vigil trace: %s\n", hosts.status().message().c_str());
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
  cmd->add_option("--slurm-job", opts->slurm_job, "Trace on the nodes of this SLURM job");
  cmd->add_option("--parallel", opts->parallel, "Hosts contacted at once")->default_val(64);
  cmd->add_option("--start-delay-ms", opts->start_delay_ms,
                  "Synchronised start this far in the future (default 10000 for several hosts)")
      ->default_val(0);
  cmd->add_flag("--wait", opts->wait, "Follow every trace to completion and print a table");
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
