// SPDX-License-Identifier: Apache-2.0
// The hardware path without hardware: PmuCounters runs against a fake PerfEventSys on the fixture
// hosts (tests/data/pmu), and every perf_event_open call is compared with the expected list, attr
// field by attr field; read() buffers in the kernel's layout check the multiplexing arithmetic.
#include "profile/pmu_counters.h"

#include <errno.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/strings.h"

namespace vigil {
namespace {

std::string Fixture(std::string_view host) {
  return std::string(VIGIL_TEST_DATA_DIR) + "/pmu/" + std::string(host);
}

PmuHost Detect(std::string_view host) {
  StatusOr<PmuHost> h = DetectPmuHost(Fixture(host) + "/proc", Fixture(host) + "/sys");
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  return h.ok() ? *h : PmuHost{};
}

std::vector<PmuEvent> Select(const PmuHost& host, std::string_view list) {
  StatusOr<PmuEventSelection> sel = SelectPmuEvents(host, list);
  EXPECT_TRUE(sel.ok()) << sel.status().ToString();
  return sel.ok() ? sel->events : std::vector<PmuEvent>{};
}

struct OpenCall {
  perf_event_attr attr;
  pid_t pid;
  int cpu;
  int group_fd;
  unsigned long flags;
};

// Records every call; fds are 1000, 1001, ... in the order opens succeed. Refusals and read
// buffers are scripted.
class FakePerfEventSys : public PerfEventSys {
 public:
  int PerfEventOpen(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                    unsigned long flags) override {
    attempts.push_back({attr, pid, cpu, group_fd, flags});
    auto refusal = refuse.find({attr.type, attr.config});
    if (refusal != refuse.end()) {
      return -refusal->second;
    }
    opens.push_back({attr, pid, cpu, group_fd, flags});
    const int fd = next_fd++;
    live.insert(fd);
    return fd;
  }
  ssize_t Read(int fd, void* buf, size_t size) override {
    std::deque<std::vector<uint64_t>>& q = reads[fd];
    if (q.empty()) {
      return -EIO;
    }
    const std::vector<uint64_t> words = q.front();
    q.pop_front();
    const size_t bytes = std::min(size, words.size() * sizeof(uint64_t));
    std::memcpy(buf, words.data(), bytes);
    return static_cast<ssize_t>(bytes);
  }
  int Ioctl(int fd, unsigned long request, unsigned long arg) override {
    ioctls.push_back(fmt::format("{} {:#x} {}", fd, request, arg));
    return 0;
  }
  int OpenDirectory(const std::string& path) override {
    directories.push_back(path);
    live.insert(50);
    return 50;
  }
  void Close(int fd) override {
    EXPECT_EQ(live.erase(fd), 1u) << "closed twice or never opened: " << fd;
  }

  std::map<std::pair<uint32_t, uint64_t>, int> refuse;  // (type, config) -> errno.
  std::map<int, std::deque<std::vector<uint64_t>>> reads;
  std::vector<OpenCall> attempts;
  std::vector<OpenCall> opens;
  std::vector<std::string> ioctls;
  std::vector<std::string> directories;
  std::set<int> live;
  int next_fd = 1000;
};

// "type=0 config=0x1 ... flags=0x8" -> the call it describes.
OpenCall ParseExpected(std::string_view line) {
  OpenCall call{};
  std::memset(&call.attr, 0, sizeof call.attr);
  call.attr.size = sizeof call.attr;
  for (std::string_view field : SplitWhitespace(line)) {
    const size_t eq = field.find('=');
    const std::string key(field.substr(0, eq));
    const std::string value(field.substr(eq + 1));
    const long long v = std::stoll(value, nullptr, 0);
    if (key == "type") call.attr.type = static_cast<uint32_t>(v);
    if (key == "config") call.attr.config = std::stoull(value, nullptr, 0);
    if (key == "config1") call.attr.config1 = std::stoull(value, nullptr, 0);
    if (key == "config2") call.attr.config2 = std::stoull(value, nullptr, 0);
    if (key == "read_format") call.attr.read_format = static_cast<uint64_t>(v);
    if (key == "disabled") call.attr.disabled = static_cast<uint64_t>(v);
    if (key == "pid") call.pid = static_cast<pid_t>(v);
    if (key == "cpu") call.cpu = static_cast<int>(v);
    if (key == "group_fd") call.group_fd = static_cast<int>(v);
    if (key == "flags") call.flags = static_cast<unsigned long>(v);
  }
  return call;
}

std::vector<OpenCall> ReadExpected(std::string_view host) {
  std::ifstream in(Fixture(host) + "/expected_default_opens.txt");
  EXPECT_TRUE(in.good());
  std::vector<OpenCall> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') {
      out.push_back(ParseExpected(line));
    }
  }
  return out;
}

std::string Describe(const OpenCall& c) {
  return fmt::format(
      "type={} config={:#x} config1={:#x} config2={:#x} read_format={:#x} disabled={} pid={} "
      "cpu={} group_fd={} flags={:#x}",
      c.attr.type, c.attr.config, c.attr.config1, c.attr.config2, c.attr.read_format,
      static_cast<int>(c.attr.disabled), c.pid, c.cpu, c.group_fd, c.flags);
}

void ExpectOpens(const std::vector<OpenCall>& got, const std::vector<OpenCall>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(Describe(got[i]), Describe(want[i])) << "call " << i;
    // The whole attr, not only the fields above: inherit, exclude_*, sample_* all zero.
    EXPECT_EQ(std::memcmp(&got[i].attr, &want[i].attr, sizeof(perf_event_attr)), 0)
        << "call " << i << " sets attr fields beyond " << Describe(want[i]);
  }
}

PmuCounterOptions Cpus(std::vector<int> cpus) {
  PmuCounterOptions o;
  o.cpus = std::move(cpus);
  return o;
}

TEST(PmuCountersTest, IntelDefaultPresetOpensTheRecordedAttrs) {
  const PmuHost host = Detect("intel_host");
  FakePerfEventSys sys;
  PmuCounters counters(Select(host, "default"), Cpus(host.online_cpus), &sys);
  ASSERT_TRUE(counters.Open().ok());
  ExpectOpens(sys.opens, ReadExpected("intel_host"));
  // 4 CPUs x 2 core groups + 2 IMCs x 2 sockets; each leader reset then enabled as a group.
  EXPECT_EQ(counters.groups(), 12u);
  EXPECT_EQ(counters.open_fds(), 36u);
  ASSERT_EQ(sys.ioctls.size(), 24u);
  EXPECT_EQ(sys.ioctls[0], fmt::format("1000 {:#x} 1", PERF_EVENT_IOC_RESET));
  EXPECT_EQ(sys.ioctls[1], fmt::format("1000 {:#x} 1", PERF_EVENT_IOC_ENABLE));
  EXPECT_EQ(sys.ioctls[2], fmt::format("1004 {:#x} 1", PERF_EVENT_IOC_RESET));
  EXPECT_TRUE(counters.failures().empty());
}

TEST(PmuCountersTest, AmdDefaultPresetOpensTheRecordedAttrs) {
  const PmuHost host = Detect("amd_host");
  FakePerfEventSys sys;
  PmuCounters counters(Select(host, "default"), Cpus(host.online_cpus), &sys);
  ASSERT_TRUE(counters.Open().ok());
  ExpectOpens(sys.opens, ReadExpected("amd_host"));
  EXPECT_EQ(counters.groups(), 10u);  // 4 CPUs x 2 core groups + 8 DF events in 2 groups of 4.
}

TEST(PmuCountersTest, AGroupNeverMixesPmus) {
  const PmuHost host = Detect("intel_host");
  FakePerfEventSys sys;
  PmuCounters counters(Select(host, "instructions,msr/tsc/,task-clock,cycles"), Cpus({0}), &sys);
  ASSERT_TRUE(counters.Open().ok());
  ASSERT_EQ(sys.opens.size(), 4u);
  EXPECT_EQ(Describe(sys.opens[0]),
            "type=0 config=0x1 config1=0x0 config2=0x0 read_format=0xb disabled=1 pid=-1 cpu=0 "
            "group_fd=-1 flags=0x8");
  EXPECT_EQ(Describe(sys.opens[1]),
            "type=0 config=0x0 config1=0x0 config2=0x0 read_format=0xb disabled=0 pid=-1 cpu=0 "
            "group_fd=1000 flags=0x8");
  EXPECT_EQ(Describe(sys.opens[2]),
            "type=8 config=0x0 config1=0x0 config2=0x0 read_format=0xb disabled=1 pid=-1 cpu=0 "
            "group_fd=-1 flags=0x8");
  EXPECT_EQ(Describe(sys.opens[3]),
            "type=1 config=0x1 config1=0x0 config2=0x0 read_format=0xb disabled=1 pid=-1 cpu=0 "
            "group_fd=-1 flags=0x8");
  EXPECT_EQ(counters.groups(), 3u);
}

TEST(PmuCountersTest, CgroupsOfInterestAreOpenedPerCpuWithTheCgroupFd) {
  const PmuHost host = Detect("vm_host");
  FakePerfEventSys sys;
  PmuCounterOptions options = Cpus({0, 1});
  options.cgroup_root = "/sys/fs/cgroup";
  options.cgroups = {"/slurm/job_7"};
  PmuCounters counters(Select(host, "software"), options, &sys);
  ASSERT_TRUE(counters.Open().ok());
  EXPECT_EQ(sys.directories, (std::vector<std::string>{"/sys/fs/cgroup/slurm/job_7"}));
  ASSERT_EQ(sys.opens.size(), 20u);  // 5 events x (2 CPUs + 2 CPUs in the cgroup).
  EXPECT_EQ(Describe(sys.opens[0]),
            "type=1 config=0x1 config1=0x0 config2=0x0 read_format=0xb disabled=1 pid=-1 cpu=0 "
            "group_fd=-1 flags=0x8");
  EXPECT_EQ(Describe(sys.opens[4]),
            "type=1 config=0x6 config1=0x0 config2=0x0 read_format=0xb disabled=0 pid=-1 cpu=0 "
            "group_fd=1000 flags=0x8");
  EXPECT_EQ(Describe(sys.opens[10]),
            "type=1 config=0x1 config1=0x0 config2=0x0 read_format=0xb disabled=1 pid=50 cpu=0 "
            "group_fd=-1 flags=0xc");
  EXPECT_EQ(Describe(sys.opens[16]),
            "type=1 config=0x3 config1=0x0 config2=0x0 read_format=0xb disabled=0 pid=50 cpu=1 "
            "group_fd=1015 flags=0xc");
  EXPECT_EQ(sys.live.count(50), 0u);  // The cgroup directory fd is closed once its events hold it.
  const std::vector<PmuCounters::Count> counts = counters.Counts();
  ASSERT_EQ(counts.size(), 20u);
  EXPECT_EQ(counts[19].target, (PmuTarget{1, 0}));
}

TEST(PmuCountersTest, EventsThePmuRefusesAreDroppedOnceAndTheRestStillOpen) {
  const PmuHost host = Detect("amd_host");
  FakePerfEventSys sys;
  sys.refuse[{PERF_TYPE_HW_CACHE, 0x10003}] = ENOENT;      // dTLB-load-misses.
  sys.refuse[{PERF_TYPE_HW_CACHE, 0x10000}] = EOPNOTSUPP;  // L1-dcache-load-misses (a leader).
  PmuCounters counters(Select(host,
                              "instructions,L1-dcache-load-misses,dTLB-load-misses,"
                              "branch-misses,cycles"),
                       Cpus({0, 1}), &sys);
  ASSERT_TRUE(counters.Open().ok());
  ASSERT_EQ(counters.failures().size(), 2u);
  EXPECT_NE(counters.failures()[0].find("L1-dcache-load-misses: perf_event_open"),
            std::string::npos);
  EXPECT_NE(counters.failures()[1].find("dTLB-load-misses"), std::string::npos);
  // CPU 0 tries both and learns; CPU 1 does not try them again.
  EXPECT_EQ(sys.attempts.size(), 3u + 2u + 1u + 2u);
  ASSERT_EQ(sys.opens.size(), 6u);
  // Group 1: instructions, [L1d refused], [dTLB refused], branch-misses; group 2: cycles.
  EXPECT_EQ(sys.opens[1].attr.config, static_cast<uint64_t>(PERF_COUNT_HW_BRANCH_MISSES));
  EXPECT_EQ(sys.opens[1].group_fd, 1000);
  EXPECT_EQ(sys.opens[2].attr.config, static_cast<uint64_t>(PERF_COUNT_HW_CPU_CYCLES));
  EXPECT_EQ(sys.opens[2].group_fd, -1);
}

TEST(PmuCountersTest, PermissionDeniedStopsAndLeaksNothing) {
  const PmuHost host = Detect("vm_host");
  FakePerfEventSys sys;
  sys.refuse[{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS}] = EACCES;
  PmuCounters counters(Select(host, "software"), Cpus({0, 1}), &sys);
  Status s = counters.Open();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("cpu-migrations on cpu 0"), std::string::npos) << s.message();
  EXPECT_TRUE(sys.live.empty());
  EXPECT_EQ(counters.groups(), 0u);
}

TEST(PmuCountersTest, NothingOpenableIsNotFound) {
  const PmuHost host = Detect("vm_host");
  FakePerfEventSys sys;
  sys.refuse[{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK}] = ENOENT;
  PmuCounters counters(Select(host, "task-clock"), Cpus({0}), &sys);
  EXPECT_EQ(counters.Open().code(), StatusCode::kNotFound);
}

TEST(PmuCountersTest, TheFdCapIsHonoured) {
  const PmuHost host = Detect("vm_host");
  FakePerfEventSys sys;
  PmuCounterOptions options = Cpus({0, 1, 2, 3});
  options.max_fds = 7;
  PmuCounters counters(Select(host, "software"), options, &sys);
  ASSERT_TRUE(counters.Open().ok());
  EXPECT_EQ(counters.open_fds(), 7u);  // CPU 0's five and two of CPU 1's.
  ASSERT_FALSE(counters.failures().empty());
  EXPECT_EQ(counters.failures().back(), "stopped at 7 open perf events (the cap)");
}

// Group read buffers as the kernel writes them: nr, time_enabled, time_running, values.
TEST(PmuScalingTest, CountsAreScaledByEnabledOverRunningPerInterval) {
  const PmuHost host = Detect("intel_host");
  FakePerfEventSys sys;
  PmuCounters counters(Select(host, "instructions,cycles,cache-references,cache-misses"), Cpus({0}),
                       &sys);
  ASSERT_TRUE(counters.Open().ok());
  // Interval 1: the group ran a quarter of the time -> x4.
  sys.reads[1000].push_back({4, 1'000'000'000, 250'000'000, 1'000'000, 2'000'000, 30'000, 4'000});
  // Interval 2: enabled 2 s more, ran 1 s more -> x2.
  sys.reads[1000].push_back({4, 3'000'000'000, 1'250'000'000, 3'000'000, 6'000'000, 50'000, 5'000});
  // Interval 3: not scheduled at all -> unknown, adds nothing.
  sys.reads[1000].push_back({4, 4'000'000'000, 1'250'000'000, 3'000'000, 6'000'000, 50'000, 5'000});

  ASSERT_TRUE(counters.Read().ok());
  EXPECT_EQ(counters.Total(0, {0, -1}), 4'000'000.0);
  EXPECT_EQ(counters.Total(1, {0, -1}), 8'000'000.0);
  EXPECT_EQ(counters.Total(2, {0, -1}), 120'000.0);
  EXPECT_EQ(counters.Total(3, {0, -1}), 16'000.0);
  std::vector<PmuCounters::Count> c = counters.Counts();
  EXPECT_EQ(c[0].enabled_ns, 1'000'000'000u);
  EXPECT_EQ(c[0].running_ns, 250'000'000u);

  ASSERT_TRUE(counters.Read().ok());
  EXPECT_EQ(counters.Total(0, {0, -1}), 8'000'000.0);
  EXPECT_EQ(counters.Total(1, {0, -1}), 16'000'000.0);
  EXPECT_EQ(counters.Total(2, {0, -1}), 160'000.0);
  EXPECT_EQ(counters.Total(3, {0, -1}), 18'000.0);
  c = counters.Counts();
  EXPECT_EQ(c[3].last_delta, 2'000.0);
  EXPECT_EQ(c[3].enabled_ns, 2'000'000'000u);
  EXPECT_EQ(c[3].running_ns, 1'000'000'000u);

  ASSERT_TRUE(counters.Read().ok());
  EXPECT_EQ(counters.Total(0, {0, -1}), 8'000'000.0);
  c = counters.Counts();
  EXPECT_EQ(c[0].last_delta, 0.0);
  EXPECT_EQ(c[0].enabled_ns, 1'000'000'000u);
  EXPECT_EQ(c[0].running_ns, 0u);
  EXPECT_EQ(counters.Total(0, {1, -1}), std::nullopt);
}

TEST(PmuScalingTest, UncoreCountsAreBytesAndUnscaledWhenNeverMultiplexed) {
  const PmuHost host = Detect("intel_host");
  FakePerfEventSys sys;
  PmuCounters counters(Select(host, "uncore_imc_0/cas_count_read/,uncore_imc_0/cas_count_write/"),
                       Cpus(host.online_cpus), &sys);
  ASSERT_TRUE(counters.Open().ok());
  ASSERT_EQ(counters.groups(), 2u);  // Sockets 0 and 1 (CPUs 0 and 2).
  sys.reads[1000].push_back({2, 500, 500, 1'000, 10});
  sys.reads[1002].push_back({2, 500, 500, 3, 0});
  ASSERT_TRUE(counters.Read().ok());
  EXPECT_EQ(counters.Total(0, {0, -1}), 64'000.0);
  EXPECT_EQ(counters.Total(1, {0, -1}), 640.0);
  EXPECT_EQ(counters.Total(0, {2, -1}), 192.0);
}

TEST(PmuScalingTest, BadBuffersAreDataLossAndOtherGroupsStillCount) {
  const PmuHost host = Detect("vm_host");
  FakePerfEventSys sys;
  PmuCounters counters(Select(host, "task-clock,context-switches"), Cpus({0, 1}), &sys);
  ASSERT_TRUE(counters.Open().ok());
  sys.reads[1000].push_back({3, 10, 10, 1, 2, 3});  // nr says 3: the group has 2.
  sys.reads[1002].push_back({2, 10, 10, 7, 9});
  Status s = counters.Read();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(),
            "1 of 2 perf groups could not be read (cpu 0: perf group read: 3 "
            "events, expected 2)");
  EXPECT_EQ(counters.Total(0, {0, -1}), 0.0);
  EXPECT_EQ(counters.Total(1, {1, -1}), 9.0);
}

TEST(PmuScalingTest, ParserRefusesShortBuffers) {
  const uint64_t words[] = {2, 10, 10, 7};
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(words), sizeof words);
  EXPECT_EQ(ParsePerfGroupRead(bytes, 2).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParsePerfGroupRead(bytes.first(16), 2).status().code(), StatusCode::kDataLoss);
  StatusOr<PerfGroupReading> r = ParsePerfGroupRead(bytes, 1);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);  // nr 2, expected 1.
}

TEST(PmuScalingTest, ACounterThatWentBackwardsCountsFromZero) {
  PerfGroupReading before{100, 100, {50}};
  PerfGroupReading after{30, 30, {20}};  // Re-created group.
  const double scales[] = {1.0};
  ScaledDelta d = ScalePerfDelta(before, after, scales);
  EXPECT_EQ(d.counts[0], 20.0);
  EXPECT_EQ(d.enabled_ns, 30u);
}

}  // namespace
}  // namespace vigil
