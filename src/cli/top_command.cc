// SPDX-License-Identifier: Apache-2.0
// `vigil top`: a live terminal view of one host (see cli/top_view.h for what it shows), redrawn
// every --interval until `q` or Ctrl-C, with plain ANSI escapes (alternate screen, home, clear).
// Keys c m g p n re-sort the process tables at once, `?` shows the keys. `--once`, or an output
// that is not a terminal, prints a single frame without escapes (every column when not a tty).
#include <signal.h>
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
  std::string sort = "cpu";
};

// Waits up to timeout_ns for a key the view acts on. Returns 'q' to quit (q, Ctrl-C as a key or
// SIGINT/SIGTERM), another key to redraw now, or -1 when the time is up.
int WaitForKey(const TerminalScreen& screen, int64_t timeout_ns) {
  const int64_t deadline = MonotonicNanos() + timeout_ns;
  while (g_interrupted == 0) {
    const int64_t left = deadline - MonotonicNanos();
    if (left <= 0) {
      return -1;
    }
    const int key = screen.KeyWithin(static_cast<int>(left / kNanosPerMilli) + 1);
    if (key == 'q' || key == 'Q' || key == 3) {
      return 'q';
    }
    TopSort ignored;
    if (key == '?' || key == 'h' || TopSortForKey(key, &ignored)) {
      return key;
    }
  }
  return 'q';
}

int RunTop(const CliContext& ctx, const TopOptions& opts) {
  StatusOr<int64_t> interval = ParseDuration(opts.interval);
  if (!interval.ok() || *interval <= 0) {
    std::fprintf(stderr, "vigil top: --interval: not a duration: %s\n", opts.interval.c_str());
    return kExitUsage;
  }
  TopLayout layout;
  if (!ParseTopSort(opts.sort, &layout.sort)) {
    std::fprintf(stderr, "vigil top: --sort: want cpu, mem, gpumem, pid or name, not %s\n",
                 opts.sort.c_str());
    return kExitUsage;
  }
  // Check the daemon before taking over the screen, so errors stay readable.
  StatusOr<TopData> data = FetchTop(ctx);
  if (!data.ok()) {
    return ctx.Fail(data.status(), "top");
  }
  if (opts.once || isatty(STDOUT_FILENO) == 0) {
    layout.width = isatty(STDOUT_FILENO) != 0 ? TerminalScreen::Width() : 0;
    std::fputs(RenderTop(*data, layout).c_str(), stdout);
    return kExitOk;
  }
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  TerminalScreen terminal;
  layout.keys = true;
  int failures = 0;
  for (;;) {
    layout.width = TerminalScreen::Width();
    terminal.Draw(RenderTop(*data, layout));
    const int key = WaitForKey(terminal, *interval);
    if (key == 'q') {
      return kExitOk;
    }
    if (key == '?' || key == 'h') {
      layout.help = !layout.help;
      continue;  // Redraw the same data at once.
    }
    if (key >= 0) {
      TopSortForKey(key, &layout.sort);
      layout.help = false;
      continue;
    }
    StatusOr<TopData> next = FetchTop(ctx);
    if (next.ok()) {
      data = std::move(next);
      failures = 0;
      continue;
    }
    // One failed refresh is shown and retried; two in a row end the view with the error.
    if (++failures == 2) {
      return ctx.Fail(next.status(), "top");
    }
    terminal.Draw("vigil top: " + next.status().message() + "\n");
    if (WaitForKey(terminal, *interval) == 'q') {
      return kExitOk;
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
  cmd->add_option("--sort", opts->sort,
                  "Order of the process tables: cpu (default), mem, gpumem, pid, name; keys "
                  "c m g p n change it live, ? shows the keys")
      ->type_name("KEY");
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunTop(ctx, *opts); }); });
}

}  // namespace vigil
