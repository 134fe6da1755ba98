// SPDX-License-Identifier: Apache-2.0
#include "daemon/continuous_profiler.h"

#include <unistd.h>

#include <atomic>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "base/wait_for.h"
#include "metrics/naming.h"

namespace vigil::daemon {
namespace {

TEST(ContinuousProfilerTest, MetricNamesFollowTheRules) {
  for (const MetricDesc* desc : ContinuousProfiler::Metrics()) {
    EXPECT_TRUE(CheckMetricDesc(*desc).ok()) << CheckMetricDesc(*desc).message();
  }
}

TEST(ContinuousProfilerTest, TargetsAreGpuAndIpcProcessesFiledByJob) {
  auto watch = std::make_shared<WatchList>();
  const int self = static_cast<int>(getpid());
  const int parent = static_cast<int>(getppid());
  watch->Watch(self, "gpu", UnixNanos());
  watch->Watch(parent, "pattern", UnixNanos());  // Matched by a pattern only: not sampled.
  watch->Watch(999999999, "ipc", UnixNanos());   // Gone: dropped by the resolver.
  auto resolver = std::make_shared<JobResolver>(JobResolverOptions{});
  ContinuousProfiler profiler({}, watch, resolver);

  const std::vector<ProfileTarget> targets = profiler.Targets();

  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].pid, self);
  const std::string job = resolver->Resolve(self)->job_id;
  EXPECT_EQ(targets[0].job_id, job.empty() ? std::string(kNoJob) : job);
}

TEST(ContinuousProfilerTest, IdlesAndSaysSoWhenNothingHoldsAGpu) {
  ContinuousProfilerOptions options;
  options.window_ns = 3600 * kNanosPerSecond;  // Stop() must not wait for the window.
  ContinuousProfiler profiler(options, std::make_shared<WatchList>(), nullptr);
  profiler.Start();

  ASSERT_TRUE(WaitFor([&] { return profiler.stats().state.starts_with("idle"); }, 30));
  const auto stop_start = std::chrono::steady_clock::now();
  profiler.Stop();

  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, std::chrono::seconds(5));
  const nlohmann::json status = profiler.StatusJson();
  EXPECT_EQ(status["enabled"], true);
  EXPECT_EQ(status["state"], "idle: no process holds a GPU or is registered over IPC");
  EXPECT_EQ(status["frequency_hz"], 19);
  EXPECT_EQ(status["jobs"], 0);
  EXPECT_EQ(profiler.ListJson()["jobs"].size(), 0u);
}

// The sampler's CPU comes from an injected clock: each reading adds `step` seconds, so every
// window (read at its start and end) costs exactly `step` of CPU over about one second.
TEST(ContinuousProfilerTest, BudgetSetsEachWindowsFrequencyFromTheInjectedCpuClock) {
  auto watch = std::make_shared<WatchList>();
  watch->Watch(static_cast<int>(getpid()), "gpu", UnixNanos());
  std::atomic<double> step{0.5};  // 50 % of a core: far over the 0.5 % budget.
  std::atomic<double> clock{0};
  ContinuousProfilerOptions options;
  options.window_ns = kNanosPerSecond;
  options.thread_cpu_seconds = [&] { return clock.fetch_add(step.load()) + step.load(); };
  ContinuousProfiler profiler(options, watch, nullptr);
  profiler.Start();

  std::vector<int> seen;
  bool off = false;
  auto record = [&] {
    const ContinuousProfilerStats s = profiler.stats();
    off = off || s.state.starts_with("off");
    if (seen.empty() || seen.back() != s.frequency_hz) {
      seen.push_back(s.frequency_hz);
    }
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        record();
        return off || seen.back() == 1;
      },
      60, std::chrono::milliseconds(20)));
  if (off) {
    GTEST_SKIP() << "perf_event_open refused: " << profiler.stats().state;
  }
  EXPECT_EQ(seen, (std::vector<int>{19, 9, 4, 2, 1}));
  const double cpu_at_1hz = profiler.stats().cpu_seconds;
  EXPECT_DOUBLE_EQ(cpu_at_1hz, 0.5 * 4);  // Four windows at 0.5 s each.
  EXPECT_GT(profiler.stats().last_window_used, 0.005);

  step = 0;  // Now nothing: back up, doubling, to the configured 19 Hz.
  seen.clear();
  ASSERT_TRUE(WaitFor(
      [&] {
        record();
        return seen.back() == 19;
      },
      60, std::chrono::milliseconds(20)));
  profiler.Stop();
  // The first reading may still be of a window that ran at 1 Hz and cost 0.5 s.
  if (!seen.empty() && seen.front() == 1) {
    seen.erase(seen.begin());
  }
  EXPECT_EQ(seen, (std::vector<int>{2, 4, 8, 16, 19}));
}

Profile TwoStackProfile() {
  Profile profile;
  ProfileFrame root;
  root.kind = FrameKind::kProcess;
  root.function = "trainer";
  ProfileFrame hot;
  hot.function = "HotLoop";
  hot.module = "trainer";
  const int r = profile.Intern(root);
  const int h = profile.Intern(hot);
  profile.Add({r, h}, 3);
  profile.Add({r}, 1);
  return profile;
}

TEST(RenderRollingProfileTest, FoldedJsonAndGzippedPprof) {
  RollingProfiles rolling(2);
  ProfileWindow window;
  window.jobs.emplace("job-1", TwoStackProfile());
  rolling.AddWindow(std::move(window));

  auto folded = RenderRollingProfile(rolling, "job-1", "folded");
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_EQ(folded->body, "trainer 1\ntrainer;HotLoop 3\n");
  EXPECT_EQ(folded->content_type, "text/plain; charset=utf-8");
  auto json = RenderRollingProfile(rolling, "job-1", "");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(json->body)["total_samples"], 4);
  auto pprof = RenderRollingProfile(rolling, "job-1", "pprof");
  ASSERT_TRUE(pprof.ok());
  ASSERT_GE(pprof->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(pprof->body[0]), 0x1f);  // gzip magic.
  EXPECT_EQ(static_cast<unsigned char>(pprof->body[1]), 0x8b);
  EXPECT_EQ(pprof->filename, "profile.pb.gz");

  EXPECT_EQ(RenderRollingProfile(rolling, "job-2", "folded").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(RenderRollingProfile(rolling, "job-1", "svg").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::daemon
