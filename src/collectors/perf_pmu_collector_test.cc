// SPDX-License-Identifier: Apache-2.0
// perf_pmu on the fixture hosts (tests/data/pmu) with a scripted PerfEventSys, where every value
// is known, and on this machine with the kernel's perf events.
#include "collectors/perf_pmu_collector.h"

#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::MustFind;

HostPaths PmuFixture(std::string_view host) {
  const std::string root = std::string(VIGIL_TEST_DATA_DIR) + "/pmu/" + std::string(host);
  return HostPaths{.proc_root = root + "/proc", .sys_root = root + "/sys"};
}

PerfPmuCollector::Options Opts(HostPaths paths, PerfEventSys* sys,
                               std::string events = std::string(PerfPmuCollector::kDefaultEvents)) {
  PerfPmuCollector::Options o;
  o.paths = std::move(paths);
  o.events = std::move(events);
  o.sys = sys;
  return o;
}

// Each group's k-th read reports k seconds enabled; hardware groups ran half of it. Every event
// counts k x a per-event base, so scaled totals are k x 2 x base (hardware) or k x base.
class ScriptedPerfEventSys : public PerfEventSys {
 public:
  int PerfEventOpen(const perf_event_attr& attr, pid_t, int, int group_fd, unsigned long) override {
    ++open_calls;
    const int fd = next_fd++;
    const int leader = group_fd < 0 ? fd : group_fd;
    groups[leader].push_back(Base(attr));
    hardware[leader] = attr.type != PERF_TYPE_SOFTWARE;
    return fd;
  }
  ssize_t Read(int fd, void* buf, size_t size) override {
    const uint64_t k = ++reads[fd];
    std::vector<uint64_t> w = {groups[fd].size(), k * 1'000'000'000,
                               hardware[fd] ? k * 500'000'000 : k * 1'000'000'000};
    for (uint64_t base : groups[fd]) {
      w.push_back(k * base);
    }
    const size_t bytes = std::min(size, w.size() * sizeof(uint64_t));
    std::memcpy(buf, w.data(), bytes);
    return static_cast<ssize_t>(bytes);
  }
  int Ioctl(int, unsigned long, unsigned long) override { return 0; }
  int OpenDirectory(const std::string& path) override {
    directories.push_back(path);
    return 60;
  }
  void Close(int) override {}

  static uint64_t Base(const perf_event_attr& a) {
    if (a.type == PERF_TYPE_HARDWARE) {
      switch (a.config) {
        case PERF_COUNT_HW_INSTRUCTIONS:
          return 4000;
        case PERF_COUNT_HW_CPU_CYCLES:
          return 2000;
        case PERF_COUNT_HW_CACHE_REFERENCES:
          return 300;
        case PERF_COUNT_HW_CACHE_MISSES:
          return 30;
        case PERF_COUNT_HW_BRANCH_MISSES:
          return 11;
        default:
          return 1;
      }
    }
    if (a.type == PERF_TYPE_HW_CACHE) return a.config == 0x10000 ? 50 : 7;  // L1d, dTLB.
    if (a.type == PERF_TYPE_SOFTWARE) {
      switch (a.config) {
        case PERF_COUNT_SW_TASK_CLOCK:
          return 1'000'000'000;
        case PERF_COUNT_SW_CONTEXT_SWITCHES:
          return 5;
        case PERF_COUNT_SW_CPU_MIGRATIONS:
          return 1;
        case PERF_COUNT_SW_PAGE_FAULTS_MIN:
          return 20;
        case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
          return 2;
        default:
          return 1;
      }
    }
    return (a.config & 0xff00) == 0x0300 ? 1000 : 500;  // IMC CAS read / write.
  }

  std::map<int, std::vector<uint64_t>> groups;  // Leader fd -> bases in open order.
  std::map<int, bool> hardware;
  std::map<int, uint64_t> reads;
  std::vector<std::string> directories;
  int next_fd = 100;
  int open_calls = 0;
};

TEST(PerfPmuCollectorTest, IntelHostExportsScaledCountsIpcAndMemoryTraffic) {
  ScriptedPerfEventSys sys;
  PerfPmuCollector collector(Opts(PmuFixture("intel_host"), &sys));
  testing::CollectResult r = CollectOnce(collector);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  const MetricBatch& b = r.batch;
  // Hardware groups ran half the time: counts x2.
  EXPECT_EQ(MustFind(b, "vigil_pmu_instructions_total", {{"cpu", "0"}}), 8000);
  EXPECT_EQ(MustFind(b, "vigil_pmu_instructions_total", {{"cpu", "all"}}), 32000);
  EXPECT_EQ(MustFind(b, "vigil_pmu_cycles_total", {{"cpu", "3"}}), 4000);
  EXPECT_EQ(MustFind(b, "vigil_pmu_ipc", {{"cpu", "2"}}), 2.0);
  EXPECT_EQ(MustFind(b, "vigil_pmu_ipc", {{"cpu", "all"}}), 2.0);
  EXPECT_EQ(MustFind(b, "vigil_pmu_cache_references_total", {{"cpu", "1"}, {"level", "llc"}}), 600);
  EXPECT_EQ(MustFind(b, "vigil_pmu_cache_misses_total", {{"cpu", "all"}, {"level", "llc"}}), 240);
  EXPECT_EQ(MustFind(b, "vigil_pmu_cache_misses_total", {{"cpu", "0"}, {"level", "l1d"}}), 100);
  EXPECT_EQ(MustFind(b, "vigil_pmu_dtlb_load_misses_total", {{"cpu", "0"}}), 14);
  EXPECT_EQ(MustFind(b, "vigil_pmu_branch_misses_total", {{"cpu", "all"}}), 88);
  EXPECT_EQ(MustFind(b, "vigil_pmu_multiplex_ratio", {{"event", "instructions"}}), 0.5);
  EXPECT_EQ(MustFind(b, "vigil_pmu_multiplex_ratio", {{"event", "task-clock"}}), 1.0);
  // Software events are never multiplexed: 1 s of task clock per CPU.
  EXPECT_EQ(MustFind(b, "vigil_pmu_task_clock_seconds_total", {{"cpu", "2"}}), 1.0);
  EXPECT_EQ(MustFind(b, "vigil_pmu_task_clock_seconds_total", {{"cpu", "all"}}), 4.0);
  EXPECT_EQ(MustFind(b, "vigil_pmu_context_switches_total", {{"cpu", "all"}}), 20);
  EXPECT_EQ(MustFind(b, "vigil_pmu_cpu_migrations_total", {{"cpu", "0"}}), 1);
  EXPECT_EQ(MustFind(b, "vigil_pmu_page_faults_total", {{"cpu", "0"}, {"kind", "minor"}}), 20);
  EXPECT_EQ(MustFind(b, "vigil_pmu_page_faults_total", {{"cpu", "all"}, {"kind", "major"}}), 8);
  // Two IMC channels on two sockets, x2 for multiplexing, 64 bytes per CAS.
  EXPECT_EQ(MustFind(b, "vigil_pmu_memory_read_bytes_total"), 4 * 1000 * 2 * 64);
  EXPECT_EQ(MustFind(b, "vigil_pmu_memory_write_bytes_total"), 4 * 500 * 2 * 64);
  EXPECT_EQ(CountSamples(b, "vigil_pmu_memory_read_bytes_total"), 1u);
  EXPECT_EQ(MustFind(b, "vigil_pmu_info", {{"vendor", "intel"}, {"core_pmu", "cpu"}}), 1);
  EXPECT_EQ(MustFind(b, "vigil_pmu_unavailable_events"), 0);
  EXPECT_EQ(CountSamples(b, "vigil_pmu_instructions_total"), 5u);  // 4 CPUs and all.

  // The second tick adds the same again; events stay open.
  const int opens = sys.open_calls;
  r = CollectOnce(collector);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(sys.open_calls, opens);
  EXPECT_EQ(MustFind(r.batch, "vigil_pmu_instructions_total", {{"cpu", "0"}}), 16000);
  EXPECT_EQ(MustFind(r.batch, "vigil_pmu_task_clock_seconds_total", {{"cpu", "all"}}), 8.0);
  EXPECT_EQ(MustFind(r.batch, "vigil_pmu_ipc", {{"cpu", "all"}}), 2.0);
}

TEST(PerfPmuCollectorTest, CgroupsOfInterestAreCountedSeparately) {
  ScriptedPerfEventSys sys;
  PerfPmuCollector::Options o = Opts(PmuFixture("intel_host"), &sys, "instructions,task-clock");
  o.cgroups = {"slurm/job_7", "/../etc"};
  PerfPmuCollector collector(o);
  testing::CollectResult r = CollectOnce(collector);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status.message(), "cgroup /../etc: '..' is not allowed");
  // The fixture's mount table puts cgroup2 at /sys/fs/cgroup, below --sys-root.
  EXPECT_EQ(sys.directories, (std::vector<std::string>{PmuFixture("intel_host").sys_root +
                                                       "/fs/cgroup/slurm/job_7"}));
  const MetricBatch& b = r.batch;
  EXPECT_EQ(MustFind(b, "vigil_pmu_instructions_total", {{"cgroup", "/slurm/job_7"}}), 32000);
  EXPECT_EQ(MustFind(b, "vigil_pmu_task_clock_seconds_total",
                     {{"cgroup", "/slurm/job_7"}, {"cpu", "all"}}),
            4.0);
  // Per CPU only for the whole host; the host's "all" does not include the cgroup's counts.
  EXPECT_EQ(CountSamples(b, "vigil_pmu_instructions_total"), 6u);
  EXPECT_EQ(MustFind(b, "vigil_pmu_instructions_total", {{"cpu", "all"}, {"cgroup", ""}}), 32000);
  EXPECT_EQ(MustFind(b, "vigil_pmu_unavailable_events"), 1);
}

TEST(PerfPmuCollectorTest, WithoutAHardwarePmuItCountsSoftwareEventsAndSaysSo) {
  ScriptedPerfEventSys sys;
  PerfPmuCollector collector(Opts(PmuFixture("vm_host"), &sys));
  testing::CollectResult r = CollectOnce(collector);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound);  // Absent in part: the daemon keeps going.
  EXPECT_EQ(r.status.message(),
            "no hardware PMU (event sources: breakpoint, msr, software, tracepoint, uprobe): "
            "software events only");
  const MetricBatch& b = r.batch;
  EXPECT_EQ(CountSamples(b, "vigil_pmu_instructions_total"), 0u);
  EXPECT_EQ(CountSamples(b, "vigil_pmu_ipc"), 0u);
  EXPECT_EQ(MustFind(b, "vigil_pmu_task_clock_seconds_total", {{"cpu", "all"}}), 2.0);
  EXPECT_EQ(MustFind(b, "vigil_pmu_context_switches_total", {{"cpu", "1"}}), 5);
  EXPECT_EQ(MustFind(b, "vigil_pmu_info", {{"core_pmu", "none"}}), 1);
  EXPECT_EQ(MustFind(b, "vigil_pmu_unavailable_events"), 0);
  EXPECT_EQ(sys.open_calls, 10);  // 5 software events x 2 CPUs.
}

TEST(PerfPmuCollectorTest, OnlyHardwareEventsConfiguredFallsBackToSoftwareEvents) {
  ScriptedPerfEventSys sys;
  PerfPmuCollector collector(Opts(PmuFixture("vm_host"), &sys, "instructions,cycles"));
  testing::CollectResult r = CollectOnce(collector);
  EXPECT_EQ(r.status.code(), StatusCode::kNotFound);
  EXPECT_NE(r.status.message().find("instructions: no hardware PMU"), std::string::npos);
  EXPECT_EQ(MustFind(r.batch, "vigil_pmu_unavailable_events"), 2);
  EXPECT_EQ(MustFind(r.batch, "vigil_pmu_cpu_migrations_total", {{"cpu", "all"}}), 2);
}

TEST(PerfPmuCollectorTest, RawAndSysfsEventsGetTheGenericFamily) {
  ScriptedPerfEventSys sys;
  PerfPmuCollector collector(Opts(PmuFixture("intel_host"), &sys, "cpu/event=0xc0/,r412e"));
  testing::CollectResult r = CollectOnce(collector);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(CountSamples(r.batch, "vigil_pmu_events_total"), 10u);  // 2 x (4 CPUs + all).
  EXPECT_EQ(MustFind(r.batch, "vigil_pmu_events_total", {{"cpu", "0"}, {"event", "r412e"}}), 1000);
}

TEST(PerfPmuCollectorTest, ABadEventListFailsEveryTickWithoutOpeningAnything) {
  ScriptedPerfEventSys sys;
  PerfPmuCollector collector(Opts(PmuFixture("intel_host"), &sys, "default,cycels"));
  for (int i = 0; i < 2; ++i) {
    testing::CollectResult r = CollectOnce(collector);
    EXPECT_EQ(r.status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status.message().find("unknown event 'cycels'"), std::string::npos);
    EXPECT_EQ(r.batch.samples.size(), 0u);
  }
  EXPECT_EQ(sys.open_calls, 0);
}

TEST(PerfPmuCollectorTest, NoEventSourcesIsAbsent) {
  PerfPmuCollector collector(Opts(testing::FixturePaths("old_kernel_4x"), nullptr));
  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

// This machine's kernel: whatever PMU it has, the software events count for real.
TEST(PerfPmuCollectorLiveTest, SoftwareEventsCountOnThisHost) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "CPU-wide perf events need root or CAP_PERFMON";
  }
  PerfPmuCollector collector(Opts(HostPaths{}, nullptr, "software"));
  testing::CollectResult first = CollectOnce(collector);
  ASSERT_TRUE(first.status.ok() || first.status.code() == StatusCode::kNotFound)
      << first.status.ToString();
  const bool has_core = PathExists("/sys/bus/event_source/devices/cpu");
  if (!has_core) {
    EXPECT_NE(first.status.message().find("no hardware PMU"), std::string::npos);
  }
  const double cs0 = MustFind(first.batch, "vigil_pmu_context_switches_total", {{"cpu", "all"}});
  const double clock0 =
      MustFind(first.batch, "vigil_pmu_task_clock_seconds_total", {{"cpu", "all"}});
  std::thread sleeper([] {
    for (int i = 0; i < 100; ++i) {
      const timespec ts{0, 200'000};
      nanosleep(&ts, nullptr);
    }
  });
  sleeper.join();
  testing::CollectResult second = CollectOnce(collector);
  EXPECT_GE(MustFind(second.batch, "vigil_pmu_context_switches_total", {{"cpu", "all"}}) - cs0,
            100);
  EXPECT_GT(MustFind(second.batch, "vigil_pmu_task_clock_seconds_total", {{"cpu", "all"}}), clock0);
}

}  // namespace
}  // namespace vigil
