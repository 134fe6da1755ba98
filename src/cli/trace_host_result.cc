// SPDX-License-Identifier: Apache-2.0
#include "cli/trace_host_result.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/reply.h"

namespace vigil {
namespace {

int64_t JsonInt(const nlohmann::json& obj, const char* key, int64_t fallback = 0) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

BusyProcess ReadBusy(const nlohmann::json& b) {
  BusyProcess out;
  out.pid = JsonInt(b, "pid");
  out.held_by = JsonString(b, "held_by");
  const nlohmann::json& holder = JsonObject(b, "holder");
  out.origin = JsonString(holder, "origin");
  out.requested_by = JsonString(holder, "requested_by");
  out.reason = JsonString(holder, "reason");
  out.expected_end_unix_ms = JsonInt(holder, "expected_end_unix_ms");
  out.gives_up_at_unix_ms = JsonInt(holder, "gives_up_at_unix_ms");
  return out;
}

std::string AtTime(int64_t unix_ms, int64_t now_unix_ms) {
  const std::string when = FormatTimestamp(unix_ms * kNanosPerMilli);
  if (unix_ms <= now_unix_ms) {
    return when + " (passed)";
  }
  return fmt::format("{} (in {})", when, FormatDuration((unix_ms - now_unix_ms) * kNanosPerMilli));
}

}  // namespace

nlohmann::json VigilTraceStartRequest(const TraceCliOptions& o, const std::vector<int64_t>& pids) {
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
  return req;
}

void ReadVigilSession(const nlohmann::json& s, HostTraceResult* r) {
  const std::string id = JsonString(s, "trace_id");
  if (r->trace_id.empty()) {
    r->trace_id = id;
    r->log_file = JsonString(s, "log_file");
    r->log_note = JsonString(s, "log_file_note");
  }
  auto known = std::find_if(r->sessions.begin(), r->sessions.end(),
                            [&](const auto& e) { return e.first == id; });
  if (known == r->sessions.end()) {
    r->sessions.emplace_back(id, false);
    known = r->sessions.end() - 1;
  }
  known->second = s.value("done", false);
  std::erase_if(r->processes, [&](const ProcessOutcome& p) { return p.trace_id == id; });
  for (const nlohmann::json& p : JsonArray(s, "processes")) {
    r->processes.push_back(ProcessOutcome{JsonInt(p, "pid"), JsonString(p, "state"),
                                          JsonString(p, "path"), JsonInt(p, "size_bytes", -1),
                                          JsonString(p, "reason"), id});
  }
  r->done =
      std::all_of(r->sessions.begin(), r->sessions.end(), [](const auto& e) { return e.second; });
}

std::vector<BusyProcess> ReadBusyList(const nlohmann::json& session) {
  std::vector<BusyProcess> out;
  for (const nlohmann::json& b : JsonArray(session, "busy")) {
    if (JsonString(b, "held_by") != "process_limit") {
      out.push_back(ReadBusy(b));
    }
  }
  return out;
}

void ReadVigilStart(const nlohmann::json& reply, HostTraceResult* r) {
  ReadVigilSession(reply, r);
  r->busy = ReadBusyList(reply);
  r->busy_count = static_cast<int64_t>(r->busy.size());
  r->matched = JsonInt(reply, "matched");
  r->triggered = JsonInt(reply, "triggered");
  const nlohmann::json& why = JsonObject(reply, "why_nothing_matched");
  r->why_nothing = JsonString(why, "reason");
  r->registered.clear();
  for (const nlohmann::json& p : JsonArray(why, "registered")) {
    r->registered.push_back(fmt::format("{} (job {})", FormatValue(JsonNumber(p, "pid")),
                                        JsonString(p, "job_id", "?")));
  }
}

std::string DescribeBusy(const BusyProcess& b, int64_t now_unix_ms) {
  std::string who = b.origin.empty() ? "" : b.origin;
  if (!b.requested_by.empty()) {
    who += (who.empty() ? "" : ", ") + std::string("asked by ") + b.requested_by;
  }
  if (!b.reason.empty()) {
    who += (who.empty() ? "" : ", ") + fmt::format("\"{}\"", b.reason);
  }
  std::string out = fmt::format("pid {} busy with trace {}", b.pid, b.held_by);
  if (!who.empty()) {
    out += " (" + who + ")";
  }
  if (b.expected_end_unix_ms > 0) {
    out += ", should end at " + AtTime(b.expected_end_unix_ms, now_unix_ms);
  } else if (b.gives_up_at_unix_ms > 0) {
    out += ", iteration-based, freed by " + AtTime(b.gives_up_at_unix_ms, now_unix_ms);
  }
  return out;
}

std::string MatchedAgainst(const TraceCliOptions& o, size_t hosts) {
  std::vector<std::string> parts;
  parts.push_back(o.job_id.empty() ? "any job" : "job id " + o.job_id);
  if (!o.slurm_job.empty() && o.slurm_job != o.job_id) {
    parts.push_back("SLURM job " + o.slurm_job);
  }
  const std::string pids(Trim(o.pids));
  parts.push_back(pids.empty() || pids == "0" ? "any pid" : "pids " + pids);
  parts.push_back(fmt::format("on {} host{}", hosts, hosts == 1 ? "" : "s"));
  return Join(parts, ", ");
}

int64_t TotalMatched(const std::vector<HostTraceResult>& results) {
  int64_t total = 0;
  for (const HostTraceResult& r : results) {
    total += r.error.empty() ? r.matched : 0;
  }
  return total;
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
                       {"reason", p.reason},
                       {"trace_id", p.trace_id}});
    }
    nlohmann::json busy = nlohmann::json::array();
    for (const BusyProcess& b : r.busy) {
      busy.push_back(
          {{"pid", b.pid},
           {"held_by", b.held_by},
           {"origin", b.origin},
           {"requested_by", b.requested_by},
           {"expected_end_unix_ms", b.expected_end_unix_ms},
           {"expected_end", b.expected_end_unix_ms > 0
                                ? FormatTimestamp(b.expected_end_unix_ms * kNanosPerMilli)
                                : ""},
           {"gives_up_at_unix_ms", b.gives_up_at_unix_ms}});
    }
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& [id, done] : r.sessions) {
      ids.push_back(id);
    }
    out.push_back({{"host", r.host},
                   {"reached", r.reached},
                   {"daemon", r.dynolog ? "dynolog" : "vigild"},
                   {"error", r.error},
                   {"trace_id", r.trace_id},
                   {"trace_ids", std::move(ids)},
                   {"log_file", r.log_file},
                   {"log_file_note", r.log_note},
                   {"matched", r.matched},
                   {"triggered", r.triggered},
                   {"busy", r.busy_count},
                   {"busy_processes", std::move(busy)},
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
  const int64_t now_ms = UnixNanos() / kNanosPerMilli;
  for (const HostTraceResult& r : results) {
    if (!r.error.empty()) {
      table.AddRow({r.host, "-", "-", "-", r.reached ? "error" : "unreachable", r.error});
      continue;
    }
    if (r.processes.empty() && r.busy.empty()) {
      table.AddRow({r.host, r.dynolog ? "(dynolog)" : r.trace_id, std::to_string(r.matched), "-",
                    "none",
                    r.why_nothing.empty() ? fmt::format("{} busy", r.busy_count) : r.why_nothing});
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
      table.AddRow({r.host, r.dynolog ? "(dynolog)" : p.trace_id, std::to_string(r.matched),
                    std::to_string(p.pid), p.state, detail});
    }
    for (const BusyProcess& b : r.busy) {
      table.AddRow({r.host, b.held_by, std::to_string(r.matched), std::to_string(b.pid), "busy",
                    "held by another trace"});
      notes += fmt::format("{}: {}\n", r.host, DescribeBusy(b, now_ms));
    }
    if (!r.log_note.empty()) {
      notes += fmt::format("{}: {}\n", r.host, r.log_note);
    }
    if (r.dynolog && r.busy_count > 0) {
      notes += fmt::format("{}: {} matching process(es) busy with another trace\n", r.host,
                           r.busy_count);
    }
  }
  std::string out = table.Render() + notes;
  const bool any_session = std::any_of(
      results.begin(), results.end(), [](const HostTraceResult& r) { return !r.trace_id.empty(); });
  const bool any_busy = std::any_of(results.begin(), results.end(),
                                    [](const HostTraceResult& r) { return !r.busy.empty(); });
  if (!waited && any_session) {
    out += "follow with --wait, or the vigilTraceStatus RPC with each trace id\n";
  }
  if (!waited && any_busy) {
    out += "--wait --retry-busy waits for busy processes and then traces them\n";
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
    failure |= o.wait && o.retry_busy && !r.busy.empty();
    for (const ProcessOutcome& p : r.processes) {
      failure |= o.wait && p.state != "written" && p.state != "triggered";
    }
  }
  if (!any_reached) {
    return kExitUnreachable;
  }
  failure |= o.wait && TotalMatched(results) == 0;
  return failure ? kExitFailure : kExitOk;
}

}  // namespace vigil
