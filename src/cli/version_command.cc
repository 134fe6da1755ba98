// SPDX-License-Identifier: Apache-2.0
// `vigil version`: this CLI's version and, when a daemon answers getVersion, the daemon's.
// An unreachable daemon is not an error here: the CLI version is still printed (exit 0).
#include <cstdio>
#include <memory>

#include "cli/cli_context.h"
#include "cli/reply.h"
#include "cli/version.h"

namespace vigil {
namespace {

struct VersionOptions {
  bool json = false;
};

int RunVersion(const CliContext& ctx, const VersionOptions& opts) {
  StatusOr<nlohmann::json> reply = ctx.Call({{"fn", "getVersion"}});
  const std::string daemon = reply.ok() ? JsonString(*reply, "version", "?") : "";
  if (opts.json) {
    nlohmann::json out{{"cli", kVigilVersion}, {"target", ctx.Target()}};
    out["daemon"] = reply.ok() ? nlohmann::json(daemon) : nlohmann::json(nullptr);
    if (!reply.ok()) {
      out["daemon_error"] = reply.status().message();
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::printf("vigil %s\n", kVigilVersion);
  if (reply.ok()) {
    std::printf("vigild %s at %s\n", daemon.c_str(), ctx.Target().c_str());
  } else {
    std::printf("vigild: not reachable at %s (%s)\n", ctx.Target().c_str(),
                reply.status().message().c_str());
  }
  return kExitOk;
}

}  // namespace

void AddVersionCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<VersionOptions>();
  CLI::App* cmd = app.add_subcommand("version", "CLI version, and the daemon's when reachable");
  cmd->add_flag("--json", opts->json, "Print {cli, daemon, target} as JSON");
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunVersion(ctx, *opts); }); });
}

}  // namespace vigil
