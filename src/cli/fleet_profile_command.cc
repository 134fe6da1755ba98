// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_profile_command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "cli/fleet_endpoint.h"

namespace vigil {
namespace {

using nlohmann::json;

struct ProfileOptions {
  std::string job_id;
  std::string reason;
  int64_t duration_ms = 0;
  int64_t iterations = 0;
  bool wait = false;
  std::string wait_timeout = "10m";
  bool json_out = false;
  std::string fleet;
  std::string token_file;
};

// Calls to vigil-fleet with the command's --fleet and --fleet-token-file.
class FleetApi {
 public:
  FleetApi(CliContext& ctx, const ProfileOptions& o) : ctx_(ctx), o_(o) {}
  int Call(const char* what, const char* method, const std::string& path, const std::string& body,
           json* reply) {
    FleetCall call{what, method};
    call.path = path;
    call.body = body;
    return CallFleet(ctx_, o_.fleet, o_.token_file, call, reply);
  }

 private:
  CliContext& ctx_;
  const ProfileOptions& o_;
};

std::string HostsLine(const json& r) {
  std::string out;
  for (const json& h : r.value("hosts", json::array())) {
    if (!out.empty()) out += ", ";
    out += h.value("host", "?") + " " + h.value("state", "?");
    if (h.contains("error")) out += " (" + h["error"].get<std::string>() + ")";
  }
  return out;
}

void PrintRequest(const json& r) {
  std::printf("profiling request %s: job %s, %s\n", r.value("request_id", "?").c_str(),
              r.value("job_id", "?").c_str(), r.value("state", "?").c_str());
  std::printf("  reason:   %s (%s)\n", r.value("reason", "").c_str(),
              r.value("trigger", "").c_str());
  std::printf("  hosts:    %s\n", HostsLine(r).c_str());
  std::printf("  files:    %zu of %lld\n", r.value("files", json::array()).size(),
              static_cast<long long>(r.value("expected_files", int64_t{0})));
  if (r.contains("analysis_id") && !r["analysis_id"].is_null()) {
    std::printf("  analysis: %lld (GET /api/v1/analyses/%lld)\n",
                static_cast<long long>(r["analysis_id"].get<int64_t>()),
                static_cast<long long>(r["analysis_id"].get<int64_t>()));
  }
  if (r.contains("error")) std::printf("  note:     %s\n", r["error"].get<std::string>().c_str());
}

int RunProfile(CliContext& ctx, const ProfileOptions& o) {
  FleetApi api(ctx, o);
  json body{{"job_id", o.job_id}};
  if (!o.reason.empty()) body["reason"] = o.reason;
  if (o.duration_ms > 0) body["duration_ms"] = o.duration_ms;
  if (o.iterations > 0) body["iterations"] = o.iterations;
  json reply;
  if (int code = api.Call("fleet profile", "POST", "/api/v1/profiling", body.dump(), &reply);
      code != kExitOk) {
    return code;
  }
  if (o.wait) {
    StatusOr<int64_t> limit = ParseDuration(o.wait_timeout);
    if (!limit.ok()) return ctx.Fail(limit.status(), "fleet profile: --wait-timeout");
    const int64_t deadline = MonotonicNanos() + *limit;
    const std::string path = "/api/v1/profiling/" + reply.value("request_id", "");
    while (true) {
      const std::string state = reply.value("state", "");
      if (state == "analysed" || state == "failed") break;
      if (MonotonicNanos() > deadline) {
        std::fprintf(stderr, "vigil: fleet profile: still %s after %s\n", state.c_str(),
                     o.wait_timeout.c_str());
        if (!o.json_out) PrintRequest(reply);
        return kExitFailure;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (int code = api.Call("fleet profile", "GET", path, "", &reply); code != kExitOk) {
        return code;
      }
    }
  }
  if (o.json_out) {
    std::printf("%s\n", reply.dump(2).c_str());
  } else {
    PrintRequest(reply);
  }
  return o.wait && reply.value("state", "") != "analysed" ? kExitFailure : kExitOk;
}

int RunProfiles(CliContext& ctx, const ProfileOptions& o) {
  FleetApi api(ctx, o);
  json reply;
  const std::string path =
      "/api/v1/profiling" + (o.job_id.empty() ? "" : "?job_id=" + PercentEncode(o.job_id));
  if (int code = api.Call("fleet profiles", "GET", path, "", &reply); code != kExitOk) {
    return code;
  }
  if (o.json_out) {
    std::printf("%s\n", reply.dump(2).c_str());
    return kExitOk;
  }
  if (reply.value("requests", json::array()).empty()) {
    std::printf(
        "No profiling requests%s yet: ask for one with `vigil fleet profile --job-id ID`, "
        "or let vigil-fleet's profiling triggers take them (docs/fleet.md).\n",
        o.job_id.empty() ? "" : (" for job " + o.job_id).c_str());
    return kExitOk;
  }
  std::printf("%-28s %-20s %-10s %-8s %-6s %s\n", "REQUEST", "JOB", "STATE", "TRIGGER", "FILES",
              "REASON");
  for (const json& r : reply.value("requests", json::array())) {
    std::printf("%-28s %-20s %-10s %-8s %-6zu %s\n", r.value("request_id", "").c_str(),
                r.value("job_id", "").c_str(), r.value("state", "").c_str(),
                r.value("trigger", "").c_str(), r.value("files", json::array()).size(),
                r.value("reason", "").c_str());
  }
  return kExitOk;
}

void AddConnection(CLI::App* cmd, ProfileOptions* o) {
  cmd->add_option("--fleet-url,--fleet", o->fleet,
                  "vigil-fleet URL (default $VIGIL_FLEET_URL or http://127.0.0.1:9480)")
      ->type_name("URL");
  cmd->add_option("--fleet-token-file", o->token_file, "File holding a vigil-fleet token");
  cmd->add_flag("--json", o->json_out, "Print the service's JSON reply");
}

}  // namespace

void AddFleetProfileCommands(CLI::App* fleet, CliContext& ctx) {
  auto opts = std::make_shared<ProfileOptions>();
  CLI::App* profile = fleet->add_subcommand(
      "profile", "Trace a running job on all its hosts, analyse the traces, store the result");
  profile->add_option("--job-id", opts->job_id, "The job to profile")->required();
  profile->add_option("--reason", opts->reason, "Why (kept with the request and the analysis)");
  auto* duration = profile->add_option("--duration-ms", opts->duration_ms, "Trace length");
  profile->add_option("--iterations", opts->iterations, "Trace this many iterations instead")
      ->excludes(duration);
  profile->add_flag("--wait", opts->wait, "Follow the request until it is analysed or failed");
  profile->add_option("--wait-timeout", opts->wait_timeout, "Give up waiting after this long")
      ->capture_default_str();
  AddConnection(profile, opts.get());
  profile->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunProfile(ctx, *opts); }); });

  CLI::App* profiles = fleet->add_subcommand("profiles", "Profiling requests, newest first");
  profiles->add_option("--job-id", opts->job_id, "Only this job's");
  AddConnection(profiles, opts.get());
  profiles->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunProfiles(ctx, *opts); }); });
}

}  // namespace vigil
