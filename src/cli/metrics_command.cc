// SPDX-License-Identifier: Apache-2.0
// `vigil metrics [SELECTOR]`: the latest value of every matching series (vigilLatest) as an
// aligned `name{labels}  value  unit` table sorted by series (fitted to the terminal's width, see
// cli/metrics_table.h; --wide or a pipe prints it whole), or the raw reply with --json.
// --watch repeats every --interval until interrupted (or --count refreshes).
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/format.h"
#include "cli/metrics_table.h"
#include "cli/reply.h"
#include "cli/terminal_screen.h"

namespace vigil {
namespace {

struct MetricsOptions {
  std::string selector;
  bool json = false;
  bool wide = false;
  bool watch = false;
  std::string interval = "2s";
  int count = 0;  // Refreshes with --watch; 0 = until interrupted.
};

int RunMetrics(const CliContext& ctx, const MetricsOptions& opts) {
  StatusOr<int64_t> interval = ParseDuration(opts.interval);
  if (!interval.ok() || *interval <= 0) {
    std::fprintf(stderr, "vigil metrics: --interval: not a duration: %s\n", opts.interval.c_str());
    return kExitUsage;
  }
  const bool tty = isatty(STDOUT_FILENO) != 0;
  for (int n = 0;; ++n) {
    StatusOr<nlohmann::json> reply = ctx.Call({{"fn", "vigilLatest"}, {"selector", opts.selector}});
    if (!reply.ok()) {
      return ctx.Fail(reply.status(), "metrics");
    }
    // Fitted to a terminal; whole rows with --wide or into a pipe or file.
    const int width = tty && !opts.wide ? TerminalScreen::Width() : 0;
    std::string text = opts.json ? reply->dump(2) + "\n" : RenderMetricsTable(*reply, width);
    if (opts.watch) {
      const std::string title =
          fmt::format("vigil metrics {}  every {}  {}\n\n", opts.selector,
                      FormatDuration(*interval), FormatTimestamp(UnixNanos()));
      text = (tty ? "\x1b[H\x1b[2J" : (n > 0 ? "\n" : "")) + title + text;
    }
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    if (!opts.watch || (opts.count > 0 && n + 1 >= opts.count)) {
      return kExitOk;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(*interval));
  }
}

}  // namespace

void AddMetricsCommand(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<MetricsOptions>();
  CLI::App* cmd = app.add_subcommand("metrics", "Latest value of every series matching SELECTOR");
  cmd->add_option(
         "selector", opts->selector,
         "Prometheus-style selector: name, name{label=\"v\",other=~\"re.*\"}, {label=\"v\"}")
      ->type_name("SELECTOR");
  cmd->add_flag("--json", opts->json, "Print the daemon's raw vigilLatest reply");
  cmd->add_flag("--wide", opts->wide,
                "Print every label even when rows are wider than the terminal");
  cmd->add_flag("--watch", opts->watch, "Refresh until interrupted");
  cmd->add_option("--interval", opts->interval, "Refresh period with --watch (default 2s)")
      ->type_name("DURATION");
  cmd->add_option("--count", opts->count, "Stop after N refreshes with --watch")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([&ctx, opts] { RunCommand(ctx, [&] { return RunMetrics(ctx, *opts); }); });
}

}  // namespace vigil
