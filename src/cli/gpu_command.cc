// SPDX-License-Identifier: Apache-2.0
// `vigil gpu pause [--duration 5m] | resume`: stops and restarts the daemon's GPU profiling
// counters (GPM sampling, DCGM profiling fields) so Nsight Systems / Nsight Compute can take the
// counters, without stopping the daemon. Sends Dynolog's dcgmProfPause / dcgmProfResume, so it
// also works against a Dynolog daemon. `vigil dcgm-pause [--duration-s 300]` and `vigil
// dcgm-resume` are the same commands under Dynolog's `dyno` names and flags.
#include <cstdio>
#include <memory>
#include <string>

#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/reply.h"

namespace vigil {
namespace {

struct GpuOptions {
  std::string duration = "5m";
  int duration_s = -1;  // dcgm-pause --duration-s; wins over --duration when given.
};

int RunPause(const CliContext& ctx, const GpuOptions& opts) {
  StatusOr<int64_t> duration = opts.duration_s >= 0
                                   ? StatusOr<int64_t>(opts.duration_s * kNanosPerSecond)
                                   : ParseDuration(opts.duration);
  if (!duration.ok()) {
    std::fprintf(stderr, "vigil gpu pause: --duration: %s\n", duration.status().message().c_str());
    return kExitUsage;
  }
  const int64_t seconds = *duration / kNanosPerSecond;
  StatusOr<nlohmann::json> reply = ctx.Call({{"fn", "dcgmProfPause"}, {"duration_s", seconds}});
  if (!reply.ok()) {
    return ctx.Fail(reply.status(), "gpu pause");
  }
  if (reply->contains("status") && (*reply)["status"] == false) {
    return ctx.Fail(InternalError(JsonString(*reply, "error", "the daemon refused")), "gpu pause");
  }
  if (seconds > 0) {
    std::printf("GPU profiling counters paused for %s on %s\n", FormatDuration(*duration).c_str(),
                ctx.Target().c_str());
  } else {
    std::printf("GPU profiling counters paused on %s until 'vigil gpu resume'\n",
                ctx.Target().c_str());
  }
  return kExitOk;
}

int RunResume(const CliContext& ctx) {
  StatusOr<nlohmann::json> reply = ctx.Call({{"fn", "dcgmProfResume"}});
  if (!reply.ok()) {
    return ctx.Fail(reply.status(), "gpu resume");
  }
  if (reply->contains("status") && (*reply)["status"] == false) {
    return ctx.Fail(InternalError(JsonString(*reply, "error", "the daemon refused")), "gpu resume");
  }
  std::printf("GPU profiling counters resumed on %s\n", ctx.Target().c_str());
  return kExitOk;
}

}  // namespace

void AddGpuCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<GpuOptions>();
  CLI::App* gpu = app.add_subcommand("gpu", "Pause or resume the daemon's GPU profiling counters");
  gpu->require_subcommand(1);
  CLI::App* pause = gpu->add_subcommand("pause", "Release GPU profiling counters (for Nsight)");
  pause->add_option("--duration", opts->duration, "How long; 0 = until resumed")
      ->capture_default_str();
  pause->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunPause(ctx, *opts); }); });
  CLI::App* resume = gpu->add_subcommand("resume", "Take GPU profiling counters again");
  resume->callback([&ctx] { RunCommand(ctx, [&] { return RunResume(ctx); }); });

  // Dynolog's names: `dyno dcgm-pause --duration-s N` and `dyno dcgm-resume`.
  const char* kDynoGroup = "Dynolog (dyno) command names";
  CLI::App* dyno_pause =
      app.add_subcommand("dcgm-pause", "Same as 'gpu pause' (Dynolog's name; --duration-s 300)");
  dyno_pause->group(kDynoGroup);
  dyno_pause->add_option("--duration-s", opts->duration_s, "How long in seconds; 0 = until resumed")
      ->check(CLI::NonNegativeNumber);
  dyno_pause->add_option("--duration", opts->duration, "How long (5m); 0 = until resumed");
  dyno_pause->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunPause(ctx, *opts); }); });
  CLI::App* dyno_resume =
      app.add_subcommand("dcgm-resume", "Same as 'gpu resume' (Dynolog's name)");
  dyno_resume->group(kDynoGroup);
  dyno_resume->callback([&ctx] { RunCommand(ctx, [&] { return RunResume(ctx); }); });
}

}  // namespace vigil
