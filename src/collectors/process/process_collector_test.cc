// SPDX-License-Identifier: Apache-2.0
#include "collectors/process/process_collector.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

const std::string kRoot = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_procs";
constexpr double kBootTime = 1764400000;

CollectorContext FixtureContext() {
  CollectorContext context;
  context.paths.proc_root = kRoot + "/proc";
  context.paths.sys_root = kRoot + "/sys";
  context.watch_list = std::make_shared<WatchList>();
  return context;
}

MetricBatch CollectOnce(ProcessCollector& collector, Status* status = nullptr) {
  MetricBatch batch;
  MetricWriter writer(&batch);
  Status s = collector.Collect(writer);
  if (status != nullptr) {
    *status = s;
  }
  return batch;
}

std::optional<double> Value(const MetricBatch& batch, std::string_view name, std::string_view comm,
                            std::string_view job_id = "") {
  for (const Sample& s : batch.samples) {
    if (s.desc->name == name && LabelValue(s.labels, "comm") == comm &&
        LabelValue(s.labels, "job_id") == job_id) {
      return s.value;
    }
  }
  return std::nullopt;
}

TEST(ProcessCollectorTest, WatchedProcessesAreAggregatedPerComm) {
  CollectorContext context = FixtureContext();
  context.watch_list->Watch(2001, "gpu", UnixNanos());
  context.watch_list->Watch(2002, "ipc", UnixNanos());
  ProcessCollector collector(context);

  Status status;
  MetricBatch b = CollectOnce(collector, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();

  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_EQ(Value(b, "vigil_process_count", "python3"), 2.0);
  EXPECT_DOUBLE_EQ(*Value(b, "vigil_process_cpu_user_seconds_total", "python3"), (250 + 150) / hz);
  EXPECT_DOUBLE_EQ(*Value(b, "vigil_process_cpu_system_seconds_total", "python3"), (50 + 30) / hz);
  EXPECT_EQ(Value(b, "vigil_process_resident_memory_bytes", "python3"), (2500 + 1500) * page);
  EXPECT_EQ(Value(b, "vigil_process_threads", "python3"), 12.0);
  EXPECT_EQ(Value(b, "vigil_process_open_fds", "python3"), 7.0);  // 4 + 3 fd entries.
  // The oldest of the two started 10000 ticks after boot.
  EXPECT_DOUBLE_EQ(*Value(b, "vigil_process_start_time_seconds", "python3"),
                   kBootTime + 10000 / hz);
  EXPECT_EQ(Value(b, "vigil_process_unreadable_fd_dirs", "python3"), std::nullopt);
  // Nobody asked about the others, and no pid label ever appears.
  EXPECT_EQ(Value(b, "vigil_process_count", "sshd"), std::nullopt);
  for (const Sample& s : b.samples) {
    EXPECT_EQ(LabelValue(s.labels, "pid"), "");
  }
}

TEST(ProcessCollectorTest, ResolverSplitsGroupsByJob) {
  CollectorContext context = FixtureContext();
  JobResolverOptions resolver_options;
  resolver_options.proc_root = context.paths.proc_root;
  context.resolver = std::make_shared<JobResolver>(resolver_options);
  for (int pid : {2001, 2002, 2003}) {
    context.watch_list->Watch(pid, "gpu", UnixNanos());
  }
  ProcessCollector collector(context);

  MetricBatch b = CollectOnce(collector);

  EXPECT_EQ(Value(b, "vigil_process_count", "python3", "1234"), 2.0);
  EXPECT_EQ(Value(b, "vigil_process_count", "torchrun", ""), 1.0);  // A session: no job.
  for (const Sample& s : b.samples) {
    if (LabelValue(s.labels, "comm") == "python3") {
      EXPECT_EQ(LabelValue(s.labels, "user"), "4242");
    }
  }
}

TEST(ProcessCollectorTest, PatternsMatchCommOrCommandLine) {
  CollectorContext context = FixtureContext();
  context.SetOptions(ProcessCollectorOptions{
      .patterns = {"torchrun", "^sshd$", "(unclosed"}});  // The bad one is ignored.
  ProcessCollector collector(context);

  std::vector<int> pids = collector.SelectPids();

  // 2003's comm and cmdline say torchrun; 2004's comm is sshd.
  EXPECT_EQ(pids, (std::vector<int>{2003, 2004}));
  MetricBatch b = CollectOnce(collector);
  EXPECT_EQ(Value(b, "vigil_process_count", "torchrun"), 1.0);
  EXPECT_EQ(Value(b, "vigil_process_open_fds", "sshd"), 5.0);
}

TEST(ProcessCollectorTest, CommandLineOnlyMatch) {
  CollectorContext context = FixtureContext();
  context.SetOptions(ProcessCollectorOptions{.patterns = {"import torch"}});
  ProcessCollector collector(context);

  EXPECT_EQ(collector.SelectPids(), (std::vector<int>{2002}));
}

TEST(ProcessCollectorTest, VanishedWatchedProcessIsSkippedSilentlyAndUnwatched) {
  CollectorContext context = FixtureContext();
  context.watch_list->Watch(2999, "gpu", UnixNanos());
  context.watch_list->Watch(2003, "gpu", UnixNanos());
  ProcessCollector collector(context);

  Status status;
  MetricBatch b = CollectOnce(collector, &status);

  EXPECT_TRUE(status.ok());
  EXPECT_EQ(Value(b, "vigil_process_count", "torchrun"), 1.0);
  std::vector<WatchList::Entry> left = context.watch_list->Snapshot(UnixNanos(), kNanosPerSecond);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].pid, 2003);
}

TEST(ProcessCollectorTest, NothingOfInterestWritesNothing) {
  ProcessCollector collector(FixtureContext());

  Status status;
  MetricBatch b = CollectOnce(collector, &status);

  EXPECT_TRUE(status.ok());
  EXPECT_TRUE(b.samples.empty());
}

TEST(ProcessCollectorTest, MissingProcIsAbsent) {
  CollectorContext context = FixtureContext();
  context.paths.proc_root = "/nonexistent/proc";
  ProcessCollector collector(context);

  Status status;
  CollectOnce(collector, &status);

  EXPECT_TRUE(IsAbsent(status));
}

TEST(ProcessCollectorTest, UnlistableFdDirectoryIsCountedNotFatal) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "root reads every fd directory; needs an unprivileged user";
  }
  char tmpl[] = "/tmp/vigil_proc_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::filesystem::copy(kRoot, dir, std::filesystem::copy_options::recursive);
  std::filesystem::permissions(dir + "/proc/2001/fd", std::filesystem::perms::none);
  CollectorContext context = FixtureContext();
  context.paths.proc_root = dir + "/proc";
  context.watch_list->Watch(2001, "gpu", UnixNanos());
  ProcessCollector collector(context);

  Status status;
  MetricBatch b = CollectOnce(collector, &status);

  std::filesystem::permissions(dir + "/proc/2001/fd", std::filesystem::perms::owner_all);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(Value(b, "vigil_process_unreadable_fd_dirs", "python3"), 1.0);
  EXPECT_EQ(Value(b, "vigil_process_open_fds", "python3"), 0.0);
  EXPECT_EQ(Value(b, "vigil_process_count", "python3"), 1.0);
}

// The real /proc: this test process watches itself.
TEST(ProcessCollectorTest, LiveSelf) {
  CollectorContext context;
  context.watch_list = std::make_shared<WatchList>();
  context.watch_list->Watch(getpid(), "ipc", UnixNanos());
  ProcessCollector collector(context);
  StatusOr<std::string> comm_text = ReadSmallFile("/proc/self/comm");
  ASSERT_TRUE(comm_text.ok());
  const std::string comm(Trim(*comm_text));

  Status status;
  MetricBatch b = CollectOnce(collector, &status);

  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Value(b, "vigil_process_count", comm), 1.0);
  EXPECT_GT(*Value(b, "vigil_process_resident_memory_bytes", comm), 1 << 20);
  EXPECT_GE(*Value(b, "vigil_process_open_fds", comm), 3.0);  // stdin, stdout, stderr at least.
  EXPECT_GE(*Value(b, "vigil_process_threads", comm), 1.0);
  const double start = *Value(b, "vigil_process_start_time_seconds", comm);
  const double now = static_cast<double>(UnixNanos()) / 1e9;
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 3600);  // The test binary started within the last hour.
}

}  // namespace
}  // namespace vigil
