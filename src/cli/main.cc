// SPDX-License-Identifier: Apache-2.0
// `vigil`: the command-line client of vigild and vigil-fleet. Every user command is a
// subcommand, defined in its own <name>_command.cc as
//   void Add<Name>Command(CLI::App& app, CliContext& ctx);
// and listed once in VIGIL_CLI_COMMANDS below. Exit codes: 0 ok, 1 failed, 2 usage,
// 3 daemon unreachable.
#include <csignal>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "base/usage_error.h"
#include "cli/cli_context.h"
#include "cli/version.h"

// The subcommands, in --help order. Adding one: write <name>_command.cc, add it to
// VIGIL_CLI_COMMAND_SRCS in src/cli/CMakeLists.txt, and add one X(<Name>) line here.
#define VIGIL_CLI_COMMANDS(X) \
  X(Status)                   \
  X(Metrics)                  \
  X(Top)                      \
  X(Gpu)                      \
  X(Version)                  \
  X(Fleet)                    \
  X(Analyze)                  \
  X(Trace)                    \
  X(Snoop)                    \
  X(Profile)                  \
  /* end of list */

namespace vigil {
#define VIGIL_CLI_DECLARE(Name) void Add##Name##Command(CLI::App& app, CliContext& ctx);
VIGIL_CLI_COMMANDS(VIGIL_CLI_DECLARE)
#undef VIGIL_CLI_DECLARE
}  // namespace vigil

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // A closed pipe or socket is an error to report, not a death.
  vigil::CliContext ctx;
  CLI::App app{"vigil: query and control vigild, the per-host observability daemon", "vigil"};
  app.set_version_flag("--version", std::string("vigil ") + vigil::kVigilVersion);
  app.require_subcommand(1);
  app.fallthrough();  // Global options may also follow the subcommand.
  vigil::AddGlobalOptions(app, ctx);
#define VIGIL_CLI_ADD(Name) vigil::Add##Name##Command(app, ctx);
  VIGIL_CLI_COMMANDS(VIGIL_CLI_ADD)
#undef VIGIL_CLI_ADD
  // Dynolog's `dyno` names, so that scripts switch by changing the program name: `dyno gputrace`
  // is `vigil trace` (same flags); dcgm-pause and dcgm-resume are in gpu_command.cc.
  app.get_subcommand("trace")->alias("gputrace");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version exit 0; every usage error 2, named with the closest valid spelling.
    return vigil::ReportParseError(app, e);
  }
  return ctx.exit_code;
}
