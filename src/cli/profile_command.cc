// SPDX-License-Identifier: Apache-2.0
// `vigil profile`: on-CPU stack sampling of running processes (native, kernel and CPython
// frames) with perf_event, on this host. Writes the folded stacks, a flame graph page, a pprof
// profile and JSON where asked, and prints the hottest functions (self and total). Needs root,
// or a perf_event_paranoid that lets this user sample the targets (one line and exit 1 when
// not). With --host (global) or --hosts, vigild on each host samples (method vigilProfile,
// profile/profile_request.h) and the profiles are merged, each host's under its name.
// --job-id asks vigild (this host's, or --host/--hosts) to sample the job's processes.
#include <unistd.h>

#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/host_list.h"
#include "base/time_util.h"
#include "cli/cli_context.h"
#include "profile/flamegraph_html.h"
#include "profile/folded_output.h"
#include "profile/hot_functions.h"
#include "profile/json_output.h"
#include "profile/perf_sampler.h"
#include "profile/pprof_output.h"
#include "profile/profile_request.h"
#include "profile/profile_session.h"

namespace vigil {
namespace {

struct ProfileCliOptions {
  std::vector<int> pids;
  bool all = false;
  std::string job_id;
  std::string hosts;
  std::string duration = "30s";
  int frequency = 99;
  std::string folded, flamegraph, pprof, json;
  std::string unwind = "dwarf";
  bool no_python = false;
  bool no_kernel = false;
  int top = 25;
  std::string debug_root = "/usr/lib/debug";
};

Status WriteOutputs(const ProfileCliOptions& o, const Profile& profile, const std::string& title) {
  if (!o.folded.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.folded, WriteFolded(profile)));
  }
  if (!o.flamegraph.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.flamegraph, WriteFlameGraphHtml(profile, title)));
  }
  if (!o.pprof.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.pprof, WritePprof(profile)));
  }
  if (!o.json.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(
        o.json,
        ProfileToJson(profile).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) +
            "\n"));
  }
  return OkStatus();
}

// Each host's vigild samples the pids; the profiles come back as JSON and are merged.
int RunRemote(const CliContext& ctx, const ProfileCliOptions& o,
              const ProfileSessionOptions& options, Profile* merged, ProfileSessionResult* totals) {
  std::vector<std::string> hosts;
  if (!o.hosts.empty()) {
    StatusOr<std::vector<std::string>> expanded = ExpandHostList(o.hosts, 4096);
    if (!expanded.ok()) {
      std::fprintf(stderr, "vigil profile: --hosts: %s\n", expanded.status().message().c_str());
      return kExitUsage;
    }
    hosts = *expanded;
  } else {
    hosts = {ctx.host};
  }
  nlohmann::json request = ProfileRequestJson(options);
  if (!o.job_id.empty()) {
    request["job_id"] = o.job_id;
    if (options.pids.empty()) request.erase("pids");
  }
  std::vector<std::future<StatusOr<nlohmann::json>>> replies;
  for (const std::string& host : hosts) {
    replies.push_back(std::async(std::launch::async, [&ctx, &request, &options, host] {
      CliContext one = ctx;
      one.host = host;
      // The reply comes after the whole sampling window.
      one.timeout = std::to_string(options.duration.count() / 1000 + 60) + "s";
      return one.Call(request);
    }));
  }
  int failed = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    StatusOr<nlohmann::json> reply = replies[i].get();
    StatusOr<Profile> profile = reply.ok()
                                    ? ProfileFromJson(reply->value("profile", nlohmann::json()))
                                    : StatusOr<Profile>(reply.status());
    if (!profile.ok()) {
      std::fprintf(stderr, "vigil profile: %s: %s\n", hosts[i].c_str(),
                   profile.status().message().c_str());
      ++failed;
      continue;
    }
    MergeProfileUnder(hosts[i], *profile, merged);
    merged->info() = profile->info();
    totals->samples += reply->value("samples", uint64_t{0});
    totals->lost += reply->value("lost", uint64_t{0});
    totals->threads += reply->value("threads", uint64_t{0});
    totals->kernel_stacks = reply->value("kernel_stacks", false);
    totals->stacks.python_samples += profile->info().python_samples;
    totals->stacks.gil_samples += profile->info().gil_samples;
  }
  if (failed == static_cast<int>(hosts.size())) {
    return kExitFailure;
  }
  return kExitOk;
}

int RunProfile(const CliContext& ctx, const ProfileCliOptions& o) {
  // A job's processes are the daemon's to know: --job-id always goes through vigild (this host's
  // unless --host/--hosts says which).
  const bool remote = !o.hosts.empty() || !ctx.host.empty() || !o.job_id.empty();
  if (!o.job_id.empty() && o.all) {
    std::fprintf(stderr, "vigil profile: give --job-id or --all, not both\n");
    return kExitUsage;
  }
  if (remote && o.all) {
    std::fprintf(stderr, "vigil profile: --all samples this host only; give --pid with --host\n");
    return kExitUsage;
  }
  if (o.job_id.empty() && o.pids.empty() == !o.all) {
    std::fprintf(stderr, "vigil profile: give --pid PID (one or more), --job-id J or --all\n");
    return kExitUsage;
  }
  StatusOr<int64_t> duration = ParseDuration(o.duration);
  if (!duration.ok() || *duration <= 0) {
    std::fprintf(stderr, "vigil profile: bad --duration %s (e.g. 30s, 500ms, 2m)\n",
                 o.duration.c_str());
    return kExitUsage;
  }
  if (o.unwind != "dwarf" && o.unwind != "fp") {
    std::fprintf(stderr, "vigil profile: --unwind is dwarf or fp\n");
    return kExitUsage;
  }
  ProfileSessionOptions options;
  options.pids = o.pids;
  options.all = o.all;
  options.duration = std::chrono::milliseconds(*duration / 1000000);
  options.frequency_hz = o.frequency;
  options.unwind = o.unwind == "fp" ? UnwindMode::kFramePointers : UnwindMode::kDwarf;
  options.python = !o.no_python;
  options.kernel_stacks = !o.no_kernel;
  options.debug_root = o.debug_root;
  if (isatty(STDERR_FILENO) != 0) {  // A 30 s wait deserves a word; scripts get one line.
    std::fprintf(stderr, "vigil profile: sampling %s for %s at %d Hz\n",
                 o.all               ? "every process"
                 : !o.job_id.empty() ? ("job " + o.job_id).c_str()
                                     : fmt::format("pid {}", fmt::join(o.pids, ",")).c_str(),
                 o.duration.c_str(), o.frequency);
  }
  StatusOr<ProfileSessionResult> result = InternalError("not run");
  if (remote) {
    ProfileSessionResult merged;
    if (int rc = RunRemote(ctx, o, options, &merged.profile, &merged); rc != kExitOk) {
      return rc;
    }
    result = std::move(merged);
  } else {
    result = RunProfileSession(options);
  }
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kPermissionDenied) {
      std::fprintf(stderr, "vigil profile: %s\n", result.status().message().c_str());
      return kExitFailure;
    }
    return ctx.Fail(result.status(), "profile");
  }
  const Profile& profile = result->profile;
  const std::string title =
      fmt::format("vigil profile: {}, {} at {} Hz",
                  o.all               ? "all processes"
                  : !o.job_id.empty() ? "job " + o.job_id
                                      : fmt::format("pid {}", fmt::join(o.pids, ",")),
                  o.duration, o.frequency);
  if (Status written = WriteOutputs(o, profile, title); !written.ok()) {
    return ctx.Fail(written, "write profile");
  }
  std::printf("%llu samples (%s, %d Hz, %llu threads, %llu lost%s)",
              static_cast<unsigned long long>(profile.total_samples()),
              profile.info().event.c_str(), o.frequency,
              static_cast<unsigned long long>(result->threads),
              static_cast<unsigned long long>(result->lost),
              result->kernel_stacks ? "" : ", no kernel stacks");
  if (result->stacks.python_samples > 0) {
    std::printf(", %llu with Python frames, %llu holding the GIL",
                static_cast<unsigned long long>(result->stacks.python_samples),
                static_cast<unsigned long long>(result->stacks.gil_samples));
  }
  std::printf("\n\n%s", HotFunctionsText(profile, static_cast<size_t>(o.top)).c_str());
  return kExitOk;
}

}  // namespace

void AddProfileCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<ProfileCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Sample on-CPU stacks (native, kernel, Python) of processes on this host");
  cmd->add_option("--pid", opts->pids, "Process to sample (repeat for more)");
  cmd->add_flag("--all", opts->all, "Sample every process of the host");
  cmd->add_option("--job-id", opts->job_id, "Sample a job's processes through vigild");
  cmd->add_option("--hosts", opts->hosts, "Sample on these hosts through vigild");
  cmd->add_option("--duration", opts->duration, "How long to sample (e.g. 30s)")
      ->default_val("30s");
  cmd->add_option("--frequency", opts->frequency, "Samples per second per thread")
      ->default_val(99)
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--folded", opts->folded, "Write folded stacks (flamegraph.pl input)")
      ->type_name("FILE");
  cmd->add_option("--flamegraph", opts->flamegraph, "Write an interactive flame graph page")
      ->type_name("FILE.html");
  cmd->add_option("--pprof", opts->pprof, "Write a gzipped pprof profile")->type_name("FILE");
  cmd->add_option("--json", opts->json, "Write the profile as JSON")->type_name("FILE");
  cmd->add_option("--unwind", opts->unwind,
                  "dwarf (stack copies, works without frame pointers) or fp (frame pointers)")
      ->default_val("dwarf");
  cmd->add_flag("--no-python", opts->no_python, "Do not read CPython frames");
  cmd->add_flag("--no-kernel", opts->no_kernel, "Do not ask for kernel frames");
  cmd->add_option("--top", opts->top, "Rows in the hot-function summary")->default_val(25);
  cmd->add_option("--debug-root", opts->debug_root, "Where separate debug files live")
      ->default_val("/usr/lib/debug");
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunProfile(ctx, *opts); }); });
}

}  // namespace vigil
