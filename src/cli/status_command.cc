// SPDX-License-Identifier: Apache-2.0
// `vigil status`: the daemon's health in one screen (vigilStatus), or the raw reply with --json.
// Against a plain Dynolog daemon (no vigilStatus) it falls back to getStatus/getVersion.
#include <pwd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/reply.h"

namespace vigil {
namespace {

struct StatusOptions {
  bool json = false;
};

std::string Ago(double unix_ns) {
  if (unix_ns <= 0) {
    return "never";
  }
  const double seconds = static_cast<double>(UnixNanos() - static_cast<int64_t>(unix_ns)) / 1e9;
  return FormatSeconds(std::max(seconds, 0.0)) + " ago";
}

// The login name of `uid`, else the number.
std::string UserName(int uid) {
  if (uid < 0) return "?";
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(static_cast<uid_t>(uid), &pw, buffer, sizeof(buffer), &found) == 0 && found) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

std::string RenderStatus(const nlohmann::json& s) {
  std::string out =
      fmt::format("vigild {} on {} (pid {}, user {}), up {}\n", JsonString(s, "version", "?"),
                  JsonString(s, "hostname", "?"), FormatValue(JsonNumber(s, "pid", -1)),
                  JsonString(s, "user", "?"), FormatSeconds(JsonNumber(s, "uptime_s", -1)));
  const nlohmann::json& endpoints = JsonObject(s, "endpoints");
  std::string ep;
  for (const char* key : {"rpc", "unix", "http"}) {
    const std::string value = JsonString(endpoints, key);
    if (!value.empty()) {
      ep += fmt::format("{}{} {}", ep.empty() ? "" : "  ", key, value);
    }
  }
  if (!ep.empty()) {
    out += "endpoints: " + ep + "\n";
  }
  const nlohmann::json& reduced = JsonArray(s, "reduced_features");
  if (!reduced.empty()) {
    out += "reduced features:\n";
    for (const nlohmann::json& r : reduced) {
      out += "  - " + (r.is_string() ? r.get<std::string>() : r.dump()) + "\n";
    }
  }

  TextTable collectors(
      {"COLLECTOR", "STATE", "INTERVAL", "LAST RUN", "DURATION", "SAMPLES", "MESSAGE"});
  collectors.AlignRight(4);
  collectors.AlignRight(5);
  for (const nlohmann::json& c : JsonArray(s, "collectors")) {
    const double duration = JsonNumber(c, "duration_s", -1);
    collectors.AddRow({JsonString(c, "name"), JsonString(c, "state"),
                       FormatSeconds(JsonNumber(c, "interval_s", -1)),
                       Ago(JsonNumber(c, "last_run_unix_ns", 0)),
                       duration < 0 ? "-" : fmt::format("{:.1f}ms", duration * 1e3),
                       FormatValue(JsonNumber(c, "samples", 0)), JsonString(c, "message")});
  }
  out += "\n" + (collectors.empty() ? "no collectors\n" : collectors.Render());

  TextTable sinks({"SINK", "STATE", "DROPPED", "MESSAGE"});
  sinks.AlignRight(2);
  for (const nlohmann::json& k : JsonArray(s, "sinks")) {
    // A degraded sink holds buffered data in memory only (disk full, unwritable state dir).
    std::string message = JsonString(k, "message");
    const double at_risk = JsonNumber(k, "at_risk_bytes", 0);
    if (at_risk > 0) {
      message += fmt::format("{}{} at risk", message.empty() ? "" : "; ", FormatBytes(at_risk));
    }
    sinks.AddRow({JsonString(k, "name"), JsonString(k, "state"),
                  FormatValue(JsonNumber(k, "dropped", 0)), message});
  }
  out += "\n" + (sinks.empty() ? "no sinks\n" : sinks.Render());

  const nlohmann::json& store = JsonObject(s, "store");
  if (!store.empty()) {
    out += fmt::format(
        "\nstore: {} series, {} raw points, {} downsampled points, {}, {} series dropped\n",
        FormatValue(JsonNumber(store, "series")), FormatValue(JsonNumber(store, "raw_points")),
        FormatValue(JsonNumber(store, "downsampled_points")),
        FormatBytes(JsonNumber(store, "bytes")), FormatValue(JsonNumber(store, "dropped_series")));
  }
  // Trace uploads to vigil-fleet (present only with --fleet-url).
  const nlohmann::json& uploads = JsonObject(s, "trace_uploads");
  if (!uploads.empty()) {
    out += fmt::format("trace uploads: {} uploaded, {} failed, {} queued, {} sent to {}\n",
                       FormatValue(JsonNumber(uploads, "uploaded")),
                       FormatValue(JsonNumber(uploads, "failed")),
                       FormatValue(JsonNumber(uploads, "queued")),
                       FormatBytes(JsonNumber(uploads, "bytes_sent")), JsonString(uploads, "url"));
  }
  // Continuous CPU profiling (vigild --profile.continuous).
  const nlohmann::json& cp = JsonObject(s, "continuous_profile");
  if (!cp.empty()) {
    out +=
        cp.value("enabled", false)
            ? fmt::format(
                  "continuous profiling: on, {}, {} Hz (of {}), {} jobs, CPU {:.3f}% of a "
                  "core (budget {:.3f}%)\n",
                  JsonString(cp, "state"), FormatValue(JsonNumber(cp, "frequency_hz")),
                  FormatValue(JsonNumber(cp, "configured_hz")), FormatValue(JsonNumber(cp, "jobs")),
                  JsonNumber(cp, "last_window_cpu") * 100, JsonNumber(cp, "cpu_budget") * 100)
            : "continuous profiling: off\n";
    // Uploads of the job profiles to vigil-fleet (with --fleet-url).
    const nlohmann::json& up = JsonObject(cp, "upload");
    if (!up.empty()) {
      out +=
          fmt::format("  uploads to vigil-fleet: {}, {} uploaded, {} failed, {} queued, {} sent",
                      JsonString(up, "state"), FormatValue(JsonNumber(up, "uploaded")),
                      FormatValue(JsonNumber(up, "failed")), FormatValue(JsonNumber(up, "queued")),
                      FormatBytes(JsonNumber(up, "bytes_sent")));
      const std::string error = JsonString(up, "last_error");
      out += error.empty() ? "\n" : "; last error: " + error + "\n";
    }
  }
  // Processes registered over the IPC fabric (Kineto, libvigil_client).
  if (s.contains("registered_processes")) {
    TextTable procs({"PID", "JOB", "USER", "REGISTERED AS", "TRACE", "LAST POLL"});
    procs.AlignRight(0);
    for (const nlohmann::json& p : JsonArray(s, "registered_processes")) {
      const double pid = JsonNumber(p, "pid", -1), ns_pid = JsonNumber(p, "ns_pid", -1);
      std::string pid_text = FormatValue(pid);
      if (ns_pid >= 0 && ns_pid != pid)
        pid_text += fmt::format(" ({} inside)", FormatValue(ns_pid));
      const std::string job = JsonString(p, "job_id"), trace = JsonString(p, "trace_id");
      procs.AddRow({pid_text, job.empty() ? "-" : job,
                    UserName(static_cast<int>(JsonNumber(p, "uid", -1))), JsonString(p, "source"),
                    trace.empty() ? "-" : trace,
                    FormatSeconds(JsonNumber(p, "last_poll_s", 0)) + " ago"});
    }
    out += "\n" + (procs.empty() ? "no registered processes (none runs Kineto's IPC fabric or "
                                   "libvigil_client, or none has polled yet)\n"
                                 : "registered processes:\n" + procs.Render());
  }
  return out;
}

// A Dynolog daemon (or a vigild too old for vigilStatus) still answers getStatus/getVersion.
int DynologStatus(const CliContext& ctx, const StatusOptions& opts) {
  StatusOr<nlohmann::json> status = ctx.Call({{"fn", "getStatus"}});
  if (!status.ok()) {
    return ctx.Fail(status.status(), "status");
  }
  StatusOr<nlohmann::json> version = ctx.Call({{"fn", "getVersion"}});
  if (opts.json) {
    nlohmann::json out = *status;
    if (version.ok()) {
      out.update(*version);
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::printf(
      "daemon at %s: status %s, version %s (no vigilStatus: a Dynolog-compatible "
      "daemon, so no collector details)\n",
      ctx.Target().c_str(), JsonString(*status, "status", "?").c_str(),
      version.ok() ? JsonString(*version, "version", "?").c_str() : "?");
  return kExitOk;
}

int RunStatus(const CliContext& ctx, const StatusOptions& opts) {
  StatusOr<nlohmann::json> reply = ctx.Call({{"fn", "vigilStatus"}});
  if (!reply.ok() && reply.status().code() == StatusCode::kUnimplemented) {
    return DynologStatus(ctx, opts);
  }
  if (!reply.ok()) {
    return ctx.Fail(reply.status(), "status");
  }
  if (opts.json) {
    std::printf("%s\n", reply->dump(2).c_str());
  } else {
    std::fputs(RenderStatus(*reply).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

void AddStatusCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand(
      "status", "Daemon health: version, uptime, each collector's state, sinks, store");
  cmd->add_flag("--json", opts->json, "Print the daemon's raw vigilStatus reply");
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunStatus(ctx, *opts); }); });
}

}  // namespace vigil
