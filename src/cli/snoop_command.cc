// SPDX-License-Identifier: Apache-2.0
// `vigil snoop`: eBPF tracing of the CUDA runtime and driver calls of running processes
// (--pid, repeatable) or of a command it starts (`-- COMMAND ARGS...`, traced from its first
// call). Runs locally, needs root or CAP_BPF + CAP_PERFMON, and no daemon. While tracing, a live
// view is redrawn every second when stdout is a terminal (alternate screen; q or Ctrl-C stops);
// at the end the summary is printed and --json / --chrome-trace written. The session ends at
// --duration, on SIGINT or SIGTERM, when the command exits, or when every traced pid has exited;
// the probes are detached before the summary is printed. With a command, vigil exits with the
// command's exit status (128 + N when a signal N killed it), like strace; a command still running
// when the session ends keeps running.
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/time_util.h"
#include "cli/cli_context.h"
#include "cli/terminal_screen.h"
#include "snoop/snoop_chrome_trace.h"
#include "snoop/snoop_json.h"
#include "snoop/snoop_live_view.h"
#include "snoop/snoop_session.h"
#include "snoop/snoop_text.h"

namespace vigil {
namespace {

volatile std::sig_atomic_t g_stop = 0;

void OnStop(int /*signal*/) { g_stop = 1; }

// Raw events kept over the whole session for --chrome-trace; past it, events are counted lost.
constexpr size_t kMaxRawEventsKept = 5'000'000;
constexpr auto kPollSlice = std::chrono::milliseconds(100);
constexpr int64_t kFrameIntervalNs = kNanosPerSecond;

struct SnoopFlags {
  std::vector<int> pids;
  std::string duration;  // Empty: until stopped.
  std::string leak_age = "30s";
  uint64_t event_budget = 200'000;
  bool native_frames_only = false;
  std::string json_path;
  std::string chrome_trace_path;
  std::vector<std::string> command;
};

void TerminalSize(size_t* width, size_t* height) {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
    *width = ws.ws_col;
    *height = ws.ws_row;
  }
}

// "exited with status 3", "killed by signal 9"; the matching vigil exit code in *code.
std::string DescribeWait(int status, int* code) {
  if (WIFEXITED(status)) {
    *code = WEXITSTATUS(status);
    return "exited with status " + std::to_string(*code);
  }
  if (WIFSIGNALED(status)) {
    *code = 128 + WTERMSIG(status);
    return "killed by signal " + std::to_string(WTERMSIG(status));
  }
  *code = kExitFailure;
  return "ended";
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "vigil snoop: %s\n", message.c_str());
  return kExitUsage;
}

int RunSnoop(const SnoopFlags& flags) {
  if (flags.pids.empty() == flags.command.empty()) {
    return Usage("give --pid PID (repeatable) or -- COMMAND ARGS..., not both");
  }
  std::optional<int64_t> duration_ns;
  if (!flags.duration.empty()) {
    StatusOr<int64_t> d = ParseDuration(flags.duration);
    if (!d.ok() || *d <= 0) {
      return Usage("--duration: not a duration: " + flags.duration);
    }
    duration_ns = *d;
  }
  StatusOr<int64_t> leak_age = ParseDuration(flags.leak_age);
  if (!leak_age.ok() || *leak_age < 0) {
    return Usage("--leak-age: not a duration: " + flags.leak_age);
  }
  if (Status privileges = snoop::CheckSnoopPrivileges(); !privileges.ok()) {
    std::fprintf(stderr, "%s\n", privileges.message().c_str());  // One line, names the command.
    return kExitFailure;
  }

  snoop::SnoopOptions options;
  options.pids = flags.pids;
  options.raw_events = !flags.chrome_trace_path.empty();
  options.leak_age_seconds = static_cast<double>(*leak_age) / kNanosPerSecond;
  options.event_budget_per_second = flags.event_budget;
  options.python_frames = !flags.native_frames_only;
  StatusOr<std::unique_ptr<snoop::SnoopSession>> started = snoop::SnoopSession::Start(options);
  if (!started.ok()) {
    std::fprintf(stderr, "vigil snoop: %s\n", started.status().ToString().c_str());
    return kExitFailure;
  }
  std::unique_ptr<snoop::SnoopSession> session = std::move(*started);

  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  int child = -1;
  if (!flags.command.empty()) {
    StatusOr<int> spawned = session->SpawnStopped(flags.command);
    if (!spawned.ok()) {
      std::fprintf(stderr, "vigil snoop: %s\n", spawned.status().ToString().c_str());
      return kExitFailure;
    }
    child = *spawned;
    if (Status released = session->Release(child); !released.ok()) {
      std::fprintf(stderr, "vigil snoop: %s\n", released.ToString().c_str());
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
      return kExitFailure;
    }
  }

  std::vector<snoop::RawEvent> raw;
  uint64_t raw_lost = 0;
  auto take_raw = [&] {
    std::vector<snoop::RawEvent> more = session->TakeRawEvents();
    for (snoop::RawEvent& e : more) {
      if (raw.size() < kMaxRawEventsKept) {
        raw.push_back(std::move(e));
      } else {
        ++raw_lost;
      }
    }
  };

  std::optional<int> child_status;
  std::string end_reason;
  const bool live = isatty(STDOUT_FILENO) != 0;
  if (!live) {
    const size_t n = session->TracedPids().size();
    std::fprintf(stderr, "vigil snoop: tracing %zu %s (%d probes); Ctrl-C to stop\n", n,
                 n == 1 ? "process" : "processes", session->probes_attached());
  }
  {
    // Without a command, which may read the terminal itself, the keyboard too, so `q` stops.
    std::optional<TerminalScreen> screen;
    if (live) {
      screen.emplace(child < 0);
    }
    const int64_t start_ns = MonotonicNanos();
    int64_t next_frame_ns = start_ns + kFrameIntervalNs;
    snoop::SessionSummary previous;
    bool have_previous = false;
    int64_t previous_ns = start_ns;
    while (end_reason.empty()) {
      if (Status polled = session->Poll(kPollSlice); !polled.ok()) {
        end_reason = "error: " + polled.ToString();
        break;
      }
      take_raw();
      const int64_t now = MonotonicNanos();
      if (g_stop != 0 || (screen && screen->QuitKeyWithin(0))) {
        end_reason = "stopped";
      } else if (duration_ns && now - start_ns >= *duration_ns) {
        end_reason = "duration reached";
      } else if (child > 0) {
        int status = 0;
        if (waitpid(child, &status, WNOHANG) == child) {
          child_status = status;
          end_reason = "command ended";
        }
      } else if (session->TracedPids().empty()) {
        end_reason = "every traced process exited";
      }
      if (screen && end_reason.empty() && now >= next_frame_ns) {
        snoop::SessionSummary current = session->Snapshot();
        snoop::LiveFrame frame;
        frame.previous = have_previous ? &previous : nullptr;
        frame.current = &current;
        frame.interval_seconds = static_cast<double>(now - previous_ns) / kNanosPerSecond;
        TerminalSize(&frame.width, &frame.height);
        screen->Draw(snoop::RenderSnoopLive(frame) + "press q or Ctrl-C to stop\n");
        previous = std::move(current);
        have_previous = true;
        previous_ns = now;
        next_frame_ns = now + kFrameIntervalNs;
      }
    }
  }  // Leaves the alternate screen before anything is printed.

  // The last events, then the probes are detached (the session destroyed) before printing.
  if (Status polled = session->Poll(std::chrono::milliseconds(0)); !polled.ok()) {
    std::fprintf(stderr, "vigil snoop: %s\n", polled.ToString().c_str());
  }
  take_raw();
  snoop::SessionSummary summary = session->Snapshot();
  session.reset();
  if (raw_lost > 0) {
    summary.events_dropped += raw_lost;
    summary.warnings.push_back("--chrome-trace keeps " + std::to_string(kMaxRawEventsKept) +
                               " events; " + std::to_string(raw_lost) + " later ones left out");
  }

  if (child > 0 && !child_status) {
    if (int status = 0; waitpid(child, &status, WNOHANG) == child) {
      child_status = status;  // It ended with the session (Ctrl-C reaches it too).
    }
  }
  // With the JSON on stdout the text goes to stderr, so that stdout stays one JSON document.
  FILE* text = flags.json_path == "-" ? stderr : stdout;
  std::fputs(snoop::RenderSnoopSummary(summary).c_str(), text);
  int code = kExitOk;
  if (end_reason.starts_with("error: ")) {
    std::fprintf(stderr, "vigil snoop: %s\n", end_reason.c_str() + 7);
    code = kExitFailure;
  }
  if (child > 0) {
    if (child_status) {
      std::fprintf(text, "\ncommand %s\n", DescribeWait(*child_status, &code).c_str());
    } else {
      std::fprintf(text, "\ncommand still running (pid %d), no longer traced\n", child);
    }
  }
  std::fflush(text);
  if (!flags.json_path.empty()) {
    if (Status st = snoop::WriteSnoopJson(summary, flags.json_path); !st.ok()) {
      std::fprintf(stderr, "vigil snoop: --json: %s\n", st.ToString().c_str());
      code = kExitFailure;
    }
  }
  if (!flags.chrome_trace_path.empty()) {
    if (Status st = snoop::WriteSnoopChromeTrace(raw, summary, flags.chrome_trace_path); !st.ok()) {
      std::fprintf(stderr, "vigil snoop: --chrome-trace: %s\n", st.ToString().c_str());
      code = kExitFailure;
    }
  }
  return code;
}

}  // namespace

void AddSnoopCommand(CLI::App& app, CliContext& ctx) {
  auto flags = std::make_shared<SnoopFlags>();
  CLI::App* cmd = app.add_subcommand(
      "snoop",
      "Trace CUDA runtime/driver calls of processes with eBPF: launches, syncs, memory, "
      "leaks, copies (root)");
  cmd->add_option("--pid", flags->pids, "Process to trace (repeatable)")->type_name("PID");
  cmd->add_option("--duration", flags->duration,
                  "Stop after this long (default: until Ctrl-C or the command exits)")
      ->type_name("DURATION");
  cmd->add_option("--leak-age", flags->leak_age,
                  "Allocations not freed after this long are leak candidates (default 30s)")
      ->type_name("DURATION");
  cmd->add_option("--event-budget", flags->event_budget,
                  "Calls per second on the host above which calls are sampled (default 200000; "
                  "0: never)")
      ->type_name("N");
  cmd->add_flag("--native-frames-only", flags->native_frames_only,
                "Leave CPython frames out of stacks (a little less cost per allocation and sync)");
  cmd->add_option("--json", flags->json_path, "Write the summary as JSON to FILE ('-': stdout)")
      ->type_name("FILE");
  cmd->add_option("--chrome-trace", flags->chrome_trace_path,
                  "Write every call as a Chrome/Perfetto trace (Kineto's clock) to FILE")
      ->type_name("FILE");
  cmd->add_option("command", flags->command, "-- COMMAND ARGS...: start it and trace it")
      ->type_name("COMMAND");
  cmd->callback([&ctx, flags] { RunCommand(ctx, [&] { return RunSnoop(*flags); }); });
}

}  // namespace vigil
