// SPDX-License-Identifier: Apache-2.0
// `vigil top`: a live terminal view of one host (see cli/top_view.h for what it shows), redrawn
// every --interval until `q` or Ctrl-C, with plain ANSI escapes (alternate screen, home, clear).
// `--once`, or an output that is not a terminal, prints a single frame without escapes.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/terminal_screen.h"
#include "cli/top_view.h"

namespace vigil {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void OnInterrupt(int /*signal*/) { g_interrupted = 1; }

struct TopOptions {
  bool once = false;
  std::string interval = "1s";
};

// Waits up to timeout_ns for a key; true when the user asked to quit (q, Ctrl-C as a key or
// SIGINT/SIGTERM).
bool WaitForQuit(const TerminalScreen& screen, int64_t timeout_ns) {
  const int64_t deadline = MonotonicNanos() + timeout_ns;
  while (g_interrupted == 0) {
    const int64_t left = deadline - MonotonicNanos();
    if (left <= 0) {
      return false;
    }
    if (screen.QuitKeyWithin(static_cast<int>(left / kNanosPerMilli) + 1)) {
      return true;
    }
  }
  return true;
}

int TerminalWidth() {
  winsize ws{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 0;
}

int RunTop(const CliContext& ctx, const TopOptions& opts) {
  StatusOr<int64_t> interval = ParseDuration(opts.interval);
  if (!interval.ok() || *interval <= 0) {
    std::fprintf(stderr, "vigil top: --interval: not a duration: %s\n", opts.interval.c_str());
    return kExitUsage;
  }
  if (opts.once || isatty(STDOUT_FILENO) == 0) {
    StatusOr<TopData> data = FetchTop(ctx);
    if (!data.ok()) {
      return ctx.Fail(data.status(), "top");
    }
    std::fputs(RenderTop(*data, 0).c_str(), stdout);
    return kExitOk;
  }
  // Check the daemon before taking over the screen, so errors stay readable.
  StatusOr<TopData> data = FetchTop(ctx);
  if (!data.ok()) {
    return ctx.Fail(data.status(), "top");
  }
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  TerminalScreen terminal;
  for (;;) {
    std::string frame = "\x1b[H\x1b[2J" + RenderTop(*data, TerminalWidth());
    frame += "\npress q to quit\n";
    std::fputs(frame.c_str(), stdout);
    std::fflush(stdout);
    if (WaitForQuit(terminal, *interval)) {
      return kExitOk;
    }
    data = FetchTop(ctx);
    if (!data.ok()) {
      std::fprintf(stdout, "\x1b[H\x1b[2Jvigil top: %s\n", data.status().message().c_str());
      std::fflush(stdout);
      if (WaitForQuit(terminal, *interval)) {
        return kExitOk;
      }
      data = FetchTop(ctx);
      if (!data.ok()) {
        return ctx.Fail(data.status(), "top");
      }
    }
  }
}

}  // namespace

void AddTopCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<TopOptions>();
  CLI::App* cmd = app.add_subcommand(
      "top", "Live view: host CPU/memory/load/PSI, top cgroups, processes of interest, GPUs");
  cmd->add_flag("--once", opts->once, "Print one frame without terminal escapes and exit");
  cmd->add_option("--interval", opts->interval, "Refresh period (default 1s)")
      ->type_name("DURATION");
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunTop(ctx, *opts); }); });
}

}  // namespace vigil
