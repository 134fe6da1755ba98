// SPDX-License-Identifier: Apache-2.0
// What vigild's continuous profiling costs the daemon: four forked busy processes (frame
// pointers, a known call chain) are put on a watch list as GPU holders, and the daemon's
// ContinuousProfiler samples them at 19 Hz in windows for a while, with the budget set out of
// reach so the frequency stays put. Prints the sampler thread's CPU time per wall second
// (CLOCK_THREAD_CPUTIME_ID, what the budget measures) against the target of 0.5 % of one
// core, the samples taken and the rate the budget would then run at.
//   continuous_profile_cost [--processes N] [--windows N] [--window-seconds S] [--frequency HZ]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/time_util.h"
#include "base/wait_for.h"
#include "collectors/watch_list.h"
#include "daemon/continuous_profiler.h"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) void Leaf() {
  for (int i = 0; i < 200000; ++i) {
    g_sink = g_sink * 2862933555777941757ULL + static_cast<uint64_t>(i);
  }
}

__attribute__((noinline)) void Loop() {
  while (true) {
    Leaf();
    asm volatile("" ::: "memory");
  }
}

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) {
      return std::atoi(argv[i + 1]);
    }
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int processes = Flag(argc, argv, "--processes", 4);
  const int windows = Flag(argc, argv, "--windows", 3);
  const int window_s = Flag(argc, argv, "--window-seconds", 10);
  const int frequency = Flag(argc, argv, "--frequency", 19);
  if (processes < 1 || processes > 64 || windows < 1 || window_s < 1 || frequency < 1) {
    std::fprintf(stderr, "bad flags\n");
    return 2;
  }
  std::vector<pid_t> children;
  auto watch = std::make_shared<vigil::WatchList>();
  for (int i = 0; i < processes; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      Loop();
      _exit(0);
    }
    children.push_back(pid);
    watch->Watch(pid, "gpu", vigil::UnixNanos());
  }

  vigil::daemon::ContinuousProfilerOptions options;
  options.frequency_hz = frequency;
  options.window_ns = int64_t{window_s} * vigil::kNanosPerSecond;
  options.keep = static_cast<size_t>(windows);
  options.cpu_budget = 1.0;  // Measure at the configured rate; nothing is lowered.
  vigil::daemon::ContinuousProfiler profiler(options, watch, nullptr);
  const auto start = std::chrono::steady_clock::now();
  profiler.Start();
  // Each window ends on its own clock; wait for the last one with a deadline of twice the run.
  const bool done =
      vigil::WaitFor([&] { return profiler.profiles().windows() >= static_cast<size_t>(windows); },
                     2.0 * windows * window_s + 30, std::chrono::milliseconds(50));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const vigil::daemon::ContinuousProfilerStats stats = profiler.stats();
  profiler.Stop();
  for (pid_t pid : children) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  if (!done || !stats.sampling) {
    std::fprintf(stderr, "continuous profiling did not finish %d windows: %s\n", windows,
                 stats.state.c_str());
    return 1;
  }
  uint64_t samples = 0;
  for (const auto& [job, n] : profiler.profiles().SamplesTotal()) {
    samples += n;
  }
  const double used = stats.cpu_seconds / wall;
  vigil::SamplingBudget budget(frequency, 0.005);
  const vigil::BudgetStep step = budget.EndWindow(stats.cpu_seconds, wall);
  std::printf(
      "continuous profiling, %d busy processes at %d Hz, %d windows of %d s (%.1f s):\n"
      "  samples: %llu (%.1f per second)\n"
      "  sampler CPU: %.4f s = %.3f%% of one core (target: under 0.5%%)\n"
      "  %.1f us of sampler CPU per sample\n"
      "  with the default 0.5%% budget the next window would run at %d Hz (%s)\n",
      processes, frequency, windows, window_s, wall, static_cast<unsigned long long>(samples),
      static_cast<double>(samples) / wall, stats.cpu_seconds, used * 100,
      samples > 0 ? stats.cpu_seconds / static_cast<double>(samples) * 1e6 : 0.0, step.frequency_hz,
      vigil::BudgetDecisionName(step.decision));
  return 0;
}
