// SPDX-License-Identifier: Apache-2.0
// PmuCounters against the real kernel with software events (every Linux host has them, VMs
// included): context switches a thread makes are counted per CPU, and a cgroup's task clock
// (PERF_FLAG_PID_CGROUP) matches the CPU time its one process used. Needs root (or CAP_PERFMON)
// for CPU-wide events; skips otherwise.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/wait_for.h"
#include "profile/pmu_counters.h"

namespace vigil {
namespace {

std::vector<int> OnlineCpus() {
  StatusOr<std::string> text = ReadSmallFile("/sys/devices/system/cpu/online");
  if (!text.ok()) return {0};
  StatusOr<std::vector<int>> cpus = ParseCpuList(*text);
  return cpus.ok() ? *cpus : std::vector<int>{0};
}

std::vector<PmuEvent> SoftwareEvents(std::string_view list) {
  PmuHost host;  // Generic software events need nothing from the host.
  StatusOr<PmuEventSelection> sel = SelectPmuEvents(host, list);
  EXPECT_TRUE(sel.ok()) << sel.status().ToString();
  return sel.ok() ? sel->events : std::vector<PmuEvent>{};
}

double SumOver(const PmuCounters& c, size_t event, int cgroup) {
  double sum = 0;
  for (const PmuCounters::Count& n : c.Counts()) {
    if (n.event == event && n.target.cgroup == cgroup) sum += n.total;
  }
  return sum;
}

// The cgroup2 mount point from /proc/self/mounts ("" when there is none).
std::string Cgroup2Root() {
  StatusOr<std::string> mounts = ReadSmallFile("/proc/self/mounts");
  if (!mounts.ok()) return "";
  std::string_view text = *mounts;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() >= 3 && f[2] == "cgroup2") return std::string(f[1]);
  }
  return "";
}

class PmuCountersLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "CPU-wide perf events need root or CAP_PERFMON (perf_event_paranoid)";
    }
  }
};

TEST_F(PmuCountersLiveTest, ContextSwitchesOfASleepingThreadAreCounted) {
  PmuCounterOptions options;
  options.cpus = OnlineCpus();
  PmuCounters counters(SoftwareEvents("context-switches,task-clock"), options, &RealPerfEventSys());
  ASSERT_TRUE(counters.Open().ok());
  ASSERT_TRUE(counters.Read().ok());
  const double before = SumOver(counters, 0, -1);
  constexpr int kSleeps = 200;
  std::thread sleeper([] {
    for (int i = 0; i < kSleeps; ++i) {
      const timespec ts{0, 200'000};
      nanosleep(&ts, nullptr);  // Each sleep leaves the CPU: one switch at least.
    }
  });
  sleeper.join();
  ASSERT_TRUE(counters.Read().ok());
  EXPECT_GE(SumOver(counters, 0, -1) - before, kSleeps);
  for (const PmuCounters::Count& c : counters.Counts()) {
    EXPECT_TRUE(c.read);
    EXPECT_EQ(c.running_ns, c.enabled_ns) << "software events are never multiplexed";
  }
}

TEST_F(PmuCountersLiveTest, ACgroupsTaskClockIsTheCpuTimeOfItsProcess) {
  const std::string root = Cgroup2Root();
  if (root.empty()) {
    GTEST_SKIP() << "no cgroup2 hierarchy mounted";
  }
  const std::string name = "vigil-pmu-test-" + std::to_string(getpid());
  const std::string dir = JoinPath(root, name);
  if (mkdir(dir.c_str(), 0755) != 0) {
    GTEST_SKIP() << "cannot create a cgroup under " << root << ": " << strerror(errno);
  }
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  constexpr int kSleeps = 50;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(2);
    // Spin for 300 ms of CPU time, then sleep kSleeps times.
    timespec t{};
    do {
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec == 0 && t.tv_nsec < 300'000'000);
    for (int i = 0; i < kSleeps; ++i) {
      const timespec ts{0, 100'000};
      nanosleep(&ts, nullptr);
    }
    _exit(0);
  }
  close(go[0]);
  {
    std::ofstream procs(JoinPath(dir, "cgroup.procs"));
    procs << child << "\n";
  }
  PmuCounterOptions options;
  options.cpus = OnlineCpus();
  options.cgroup_root = root;
  options.cgroups = {"/" + name};
  PmuCounters counters(SoftwareEvents("task-clock,context-switches"), options, &RealPerfEventSys());
  Status opened = counters.Open();
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  int wstatus = 0;
  rusage usage{};
  ASSERT_TRUE(WaitFor([&] { return wait4(child, &wstatus, WNOHANG, &usage) == child; }, 30));
  rmdir(dir.c_str());
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  ASSERT_TRUE(counters.Read().ok());

  const double cpu_ns = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e9 +
                        (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3;
  const double task_clock_ns = SumOver(counters, 0, 0);
  EXPECT_GE(task_clock_ns, 300e6);
  // rusage ticks in microseconds and the exit path runs after the last switch: within 10%.
  EXPECT_NEAR(task_clock_ns, cpu_ns, 0.1 * cpu_ns);
  EXPECT_GE(SumOver(counters, 1, 0), kSleeps);
}

}  // namespace
}  // namespace vigil
