// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_collector.h"

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "attribution/cgroup_path_rules.h"
#include "base/file_util.h"
#include "base/time_util.h"
#include "collectors/cgroup/cgroup_layout.h"
#include "collectors/cgroup/cgroup_selection.h"
#include "collectors/cgroup/cgroup_stats.h"

namespace vigil {
namespace {

const std::string kHosts = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/";
constexpr char kJob[] = "/system.slice/slurmstepd.scope/job_1234";
constexpr char kTask[] = "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0";
constexpr char kPod[] =
    "/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice";

CollectorContext FixtureContext(const std::string& name) {
  CollectorContext context;
  context.paths.proc_root = kHosts + name + "/proc";
  context.paths.sys_root = kHosts + name + "/sys";
  return context;
}

struct Collected {
  Status status;
  MetricBatch batch;
};

Collected CollectOnce(const CollectorContext& context) {
  Collected c;
  CgroupCollector collector(context);
  MetricWriter writer(&c.batch);
  c.status = collector.Collect(writer);
  return c;
}

// The value of `name` for cgroup `cgroup` ("" for the collector-wide families).
std::optional<double> Value(const MetricBatch& batch, std::string_view name,
                            std::string_view cgroup = "") {
  for (const Sample& s : batch.samples) {
    if (s.desc->name == name && LabelValue(s.labels, "cgroup") == cgroup) {
      return s.value;
    }
  }
  return std::nullopt;
}

const Sample* Find(const MetricBatch& batch, std::string_view name, std::string_view cgroup) {
  for (const Sample& s : batch.samples) {
    if (s.desc->name == name && LabelValue(s.labels, "cgroup") == cgroup) {
      return &s;
    }
  }
  return nullptr;
}

TEST(CgroupCollectorTest, V2HostReportsTheDefaultCgroupsInBaseUnits) {
  Collected c = CollectOnce(FixtureContext("cg_v2_only"));
  ASSERT_TRUE(c.status.ok()) << c.status.ToString();
  const MetricBatch& b = c.batch;

  // The SLURM job: usage_usec 3600000000, throttled 25 of 1000 periods for 2.5 s.
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", kJob), 3600.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_user_seconds_total", kJob), 3000.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_system_seconds_total", kJob), 600.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_periods_total", kJob), 1000.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_throttled_periods_total", kJob), 25.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_throttled_seconds_total", kJob), 2.5);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", kJob), 8589934592.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_peak_bytes", kJob), 12884901888.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_limit_bytes", kJob), 17179869184.0);
  // Two devices: 1048576 + 524288 read, 2097152 + 0 written.
  EXPECT_EQ(Value(b, "vigil_cgroup_io_read_bytes_total", kJob), 1572864.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_io_written_bytes_total", kJob), 2097152.0);

  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", kPod), 42.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_throttled_seconds_total", kPod), 6.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_peak_bytes", kPod), 1610612736.0);

  // system.slice: memory.max is "max" and there is no memory.peak: both absent, not zero.
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", "/system.slice"), 536870912.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_limit_bytes", "/system.slice"), std::nullopt);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_peak_bytes", "/system.slice"), std::nullopt);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", "/system.slice"), 120.5);

  // The root: cpu.stat and io.stat, no memory.current.
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", "/"), 900.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_io_read_bytes_total", "/"), 1000.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", "/"), std::nullopt);

  // user.slice's memory.current is garbage: skipped and counted, its CPU still reported.
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", "/user.slice"), std::nullopt);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", "/user.slice"), 5.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_unreadable_files"), 1.0);

  // "/", the three top-level slices, the job and the pod.
  EXPECT_EQ(Value(b, "vigil_cgroup_monitored_cgroups"), 6.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_skipped_cgroups"), 0.0);
  const Sample* layout = Find(b, "vigil_cgroup_layout_info", "");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(LabelValue(layout->labels, "version"), "v2");
  // Not among the defaults: the job's task cgroup.
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", kTask), std::nullopt);
}

TEST(CgroupCollectorTest, ResolverAddsJobLabels) {
  CollectorContext context = FixtureContext("cg_v2_only");
  JobResolverOptions resolver_options;
  resolver_options.proc_root = context.paths.proc_root;
  context.resolver = std::make_shared<JobResolver>(resolver_options);

  Collected c = CollectOnce(context);
  ASSERT_TRUE(c.status.ok());

  const Sample* job = Find(c.batch, "vigil_cgroup_cpu_usage_seconds_total", kJob);
  const Sample* pod = Find(c.batch, "vigil_cgroup_cpu_usage_seconds_total", kPod);
  const Sample* slice = Find(c.batch, "vigil_cgroup_cpu_usage_seconds_total", "/system.slice");
  ASSERT_NE(job, nullptr);
  ASSERT_NE(pod, nullptr);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(LabelValue(job->labels, "job_id"), "1234");
  EXPECT_EQ(LabelValue(pod->labels, "job_id"), "0a1b2c3d-4e5f-6789-abcd-ef0123456789");
  EXPECT_EQ(LabelValue(slice->labels, "job_id"), "");
  EXPECT_EQ(slice->labels.size(), 1u);  // Only "cgroup".
}

TEST(CgroupCollectorTest, WatchedProcessesCgroupComesFirstWithItsJob) {
  CollectorContext context = FixtureContext("cg_v2_only");
  context.watch_list = std::make_shared<WatchList>();
  context.watch_list->Watch(4000, "gpu", UnixNanos());
  context.watch_list->Watch(4999, "gpu", UnixNanos());  // Already gone: ignored.
  JobResolverOptions resolver_options;
  resolver_options.proc_root = context.paths.proc_root;
  context.resolver = std::make_shared<JobResolver>(resolver_options);
  ASSERT_TRUE(context.resolver->Resolve(4000).ok());

  CgroupCollector collector(context);
  StatusOr<CgroupLayout> layout = DetectCgroupLayout(context.paths);
  ASSERT_TRUE(layout.ok());
  size_t skipped = 99;
  std::vector<std::string> paths = collector.SelectCgroups(*layout, &skipped);
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths[0], kTask);
  EXPECT_EQ(paths.size(), 7u);
  EXPECT_EQ(skipped, 0u);

  MetricBatch batch;
  MetricWriter writer(&batch);
  ASSERT_TRUE(collector.Collect(writer).ok());
  const Sample* task = Find(batch, "vigil_cgroup_cpu_usage_seconds_total", kTask);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->value, 3500.0);
  EXPECT_EQ(LabelValue(task->labels, "job_id"), "1234");
  EXPECT_EQ(LabelValue(task->labels, "user"), "4242");  // From the process, via the resolver.
}

TEST(CgroupCollectorTest, ConfiguredPatternsReplaceTheDefaults) {
  CollectorContext context = FixtureContext("cg_v2_only");
  context.SetOptions(CgroupCollectorOptions{
      .patterns = {"/system.slice/*/job_*/step_*/user/task_*", "/nonexistent/*"}});

  Collected c = CollectOnce(context);
  ASSERT_TRUE(c.status.ok());

  EXPECT_EQ(Value(c.batch, "vigil_cgroup_monitored_cgroups"), 1.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_memory_usage_bytes", kTask), 8000000000.0);
}

// Numbers captured from the real hybrid host (see tests/data/hosts/cg_v1_hybrid/README.md).
TEST(CgroupCollectorTest, HybridHostReadsTheV1Controllers) {
  Collected c = CollectOnce(FixtureContext("cg_v1_hybrid"));
  ASSERT_TRUE(c.status.ok()) << c.status.ToString();
  const MetricBatch& b = c.batch;

  // cpuacct.usage 370060398676 ns; cpuacct.stat user 31437, system 5569 ticks of 1/100 s.
  EXPECT_DOUBLE_EQ(*Value(b, "vigil_cgroup_cpu_usage_seconds_total", "/"), 370.060398676);
  EXPECT_DOUBLE_EQ(*Value(b, "vigil_cgroup_cpu_user_seconds_total", "/"), 314.37);
  EXPECT_DOUBLE_EQ(*Value(b, "vigil_cgroup_cpu_system_seconds_total", "/"), 55.69);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_throttled_periods_total", "/"), 0.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", "/"), 1490874368.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_peak_bytes", "/"), 2646974464.0);
  // limit_in_bytes 9223372036854771712 is v1's "unlimited".
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_limit_bytes", "/"), std::nullopt);
  EXPECT_EQ(Value(b, "vigil_cgroup_io_read_bytes_total", "/"), 0.0);
  // A memory-only cgroup: memory figures, no CPU.
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", "/process_api"), 1430425600.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", "/process_api"), std::nullopt);
  EXPECT_EQ(Value(b, "vigil_cgroup_monitored_cgroups"), 2.0);
  const Sample* layout = Find(b, "vigil_cgroup_layout_info", "");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(LabelValue(layout->labels, "version"), "hybrid");
}

TEST(CgroupCollectorTest, HybridProcessCgroupsIncludeTheMemoryOnlyPath) {
  const std::string root = kHosts + "cg_v1_hybrid";
  StatusOr<std::string> text = ReadSmallFile(root + "/proc/self/cgroup");
  ASSERT_TRUE(text.ok());
  HostPaths paths;
  paths.proc_root = root + "/proc";
  paths.sys_root = root + "/sys";
  StatusOr<CgroupLayout> layout = DetectCgroupLayout(paths);
  ASSERT_TRUE(layout.ok());

  std::vector<std::string> cgroups = CgroupPathsOfProcess(ParseProcCgroup(*text), *layout);

  EXPECT_EQ(cgroups,
            (std::vector<std::string>{"/", "/process_api/ab13a488702089c77f55408d5c2b8d98"}));

  CollectorContext context = FixtureContext("cg_v1_hybrid");
  context.SetOptions(CgroupCollectorOptions{.patterns = {"/process_api/*"}});
  Collected c = CollectOnce(context);
  const std::string ab13 = "/process_api/ab13a488702089c77f55408d5c2b8d98";
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_memory_usage_bytes", ab13), 88363008.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_memory_peak_bytes", ab13), 657203200.0);
}

TEST(CgroupCollectorTest, ContainerSeesItsOwnCgroupAsTheRoot) {
  Collected c = CollectOnce(FixtureContext("cg_container"));
  ASSERT_TRUE(c.status.ok()) << c.status.ToString();
  const MetricBatch& b = c.batch;

  EXPECT_EQ(Value(b, "vigil_cgroup_monitored_cgroups"), 1.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_usage_seconds_total", "/"), 7200.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_user_seconds_total", "/"), 7000.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_system_seconds_total", "/"), 200.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_throttled_periods_total", "/"), 1800.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_cpu_throttled_seconds_total", "/"), 90.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_usage_bytes", "/"), 34359738368.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_peak_bytes", "/"), 51539607552.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_memory_limit_bytes", "/"), 68719476736.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_io_read_bytes_total", "/"), 400.0);
  EXPECT_EQ(Value(b, "vigil_cgroup_io_written_bytes_total", "/"), 600.0);
}

TEST(CgroupCollectorTest, HostWithoutCgroupsIsAbsent) {
  Collected c = CollectOnce(FixtureContext("cg_procs"));

  EXPECT_TRUE(IsAbsent(c.status)) << c.status.ToString();
  EXPECT_TRUE(c.batch.samples.empty());
}

// A scratch v2 tree for the cap and the unreadable-file cases.
class CgroupScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil_cg_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(MakeDirs(dir_ + "/proc/self").ok());
    ASSERT_TRUE(MakeDirs(dir_ + "/sys/fs/cgroup").ok());
    ASSERT_TRUE(
        WriteFileAtomic(dir_ + "/proc/self/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")
            .ok());
    context_.paths.proc_root = dir_ + "/proc";
    context_.paths.sys_root = dir_ + "/sys";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Cgroup(const std::string& rel) { return dir_ + "/sys/fs/cgroup" + rel; }

  std::string dir_;
  CollectorContext context_;
};

TEST_F(CgroupScratchTest, CapsTheNumberOfCgroupsAndCountsTheRest) {
  for (int i = 0; i < 205; ++i) {
    const std::string dir = Cgroup("/slice" + std::to_string(1000 + i));
    ASSERT_TRUE(MakeDirs(dir).ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/cpu.stat", "usage_usec 1000000\n").ok());
  }
  context_.SetOptions(CgroupCollectorOptions{.patterns = {"/*"}});

  Collected c = CollectOnce(context_);

  EXPECT_EQ(Value(c.batch, "vigil_cgroup_monitored_cgroups"), 200.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_skipped_cgroups"), 5.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_cpu_usage_seconds_total", "/slice1000"), 1.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_cpu_usage_seconds_total", "/slice1204"), std::nullopt);
}

TEST_F(CgroupScratchTest, UnreadableFileIsSkippedAndCounted) {
  ASSERT_TRUE(MakeDirs(Cgroup("/a.slice/memory.current")).ok());  // read() fails: EISDIR.
  ASSERT_TRUE(WriteFileAtomic(Cgroup("/a.slice/cpu.stat"), "usage_usec 2000000\n").ok());

  Collected c = CollectOnce(context_);

  ASSERT_TRUE(c.status.ok());
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_unreadable_files"), 1.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_cpu_usage_seconds_total", "/a.slice"), 2.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_memory_usage_bytes", "/a.slice"), std::nullopt);
}

TEST_F(CgroupScratchTest, CgroupRemovedAfterListingIsSkipped) {
  context_.SetOptions(CgroupCollectorOptions{.patterns = {"/gone.slice"}});

  Collected c = CollectOnce(context_);

  ASSERT_TRUE(c.status.ok());
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_monitored_cgroups"), 0.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_unreadable_files"), 0.0);
}

// The globs are expanded once, not every tick; a globbed cgroup that goes away makes the next
// tick expand them again, so a cgroup created meanwhile is found then. Values are read afresh
// each tick through the kept descriptors.
TEST_F(CgroupScratchTest, GlobsAreKeptBetweenTicksUntilAGlobbedCgroupGoesAway) {
  ASSERT_TRUE(MakeDirs(Cgroup("/job_1")).ok());
  ASSERT_TRUE(WriteFileAtomic(Cgroup("/job_1/cpu.stat"), "usage_usec 1000000\n").ok());
  ASSERT_TRUE(MakeDirs(Cgroup("/job_2")).ok());
  ASSERT_TRUE(WriteFileAtomic(Cgroup("/job_2/cpu.stat"), "usage_usec 2000000\n").ok());
  context_.SetOptions(CgroupCollectorOptions{.patterns = {"/job_*"}});
  CgroupCollector collector(context_);
  auto tick = [&] {
    Collected c;
    MetricWriter writer(&c.batch);
    c.status = collector.Collect(writer);
    return c;
  };

  Collected first = tick();
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  EXPECT_EQ(Value(first.batch, "vigil_cgroup_monitored_cgroups"), 2.0);

  ASSERT_TRUE(WriteFileAtomic(Cgroup("/job_1/cpu.stat"), "usage_usec 5000000\n").ok());
  ASSERT_TRUE(MakeDirs(Cgroup("/job_3")).ok());
  ASSERT_TRUE(WriteFileAtomic(Cgroup("/job_3/cpu.stat"), "usage_usec 3000000\n").ok());
  Collected second = tick();
  EXPECT_EQ(Value(second.batch, "vigil_cgroup_cpu_usage_seconds_total", "/job_1"), 5.0);
  EXPECT_EQ(Value(second.batch, "vigil_cgroup_cpu_usage_seconds_total", "/job_3"), std::nullopt);

  std::filesystem::remove_all(Cgroup("/job_2"));
  Collected third = tick();  // job_2 is gone: not reported, and the globs are due again.
  EXPECT_EQ(Value(third.batch, "vigil_cgroup_cpu_usage_seconds_total", "/job_2"), std::nullopt);
  Collected fourth = tick();
  EXPECT_EQ(Value(fourth.batch, "vigil_cgroup_cpu_usage_seconds_total", "/job_3"), 3.0);
  EXPECT_EQ(Value(fourth.batch, "vigil_cgroup_monitored_cgroups"), 2.0);
}

// A container without its own cgroup namespace and without the host's tree: /sys/fs/cgroup shows
// its own cgroup, which /proc names /docker/abc. Paths are the hierarchy's (as /proc gives them),
// and a cgroup outside the mount is simply not visible.
TEST_F(CgroupScratchTest, AMountOfASubtreeIsReadWithTheHierarchysPaths) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/proc/self/mountinfo",
                              "25 1 0:21 / / rw - overlay overlay rw\n"
                              "30 25 0:26 /docker/abc /sys/fs/cgroup ro,nosuid shared:9 - cgroup2 "
                              "cgroup2 rw\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(Cgroup("/cpu.stat"), "usage_usec 3000000\n").ok());
  ASSERT_TRUE(MakeDirs(Cgroup("/job_7")).ok());
  ASSERT_TRUE(WriteFileAtomic(Cgroup("/job_7/cpu.stat"), "usage_usec 2000000\n").ok());
  context_.SetOptions(CgroupCollectorOptions{.patterns = {"/", "/*", "/elsewhere.slice"}});

  Collected c = CollectOnce(context_);

  ASSERT_TRUE(c.status.ok()) << c.status.ToString();
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_cpu_usage_seconds_total", "/docker/abc"), 3.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_cpu_usage_seconds_total", "/docker/abc/job_7"), 2.0);
  EXPECT_EQ(Value(c.batch, "vigil_cgroup_monitored_cgroups"), 2.0);
  const Sample* layout = Find(c.batch, "vigil_cgroup_layout_info", "");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(LabelValue(layout->labels, "root"), "/docker/abc");

  StatusOr<CgroupLayout> l = DetectCgroupLayout(context_.paths);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->Dir(l->unified, "/docker/abc/job_7"), Cgroup("/job_7"));
  EXPECT_EQ(l->Dir(l->unified, "/docker/abc"), Cgroup(""));
  EXPECT_EQ(l->Dir(l->unified, "/docker/abcd"), "");  // A sibling, not a child.
  EXPECT_EQ(l->Dir(l->unified, "/system.slice"), "");
  EXPECT_FALSE(ReadCgroupStats(*l, "/system.slice", 100).found);
}

// The real host, whatever its layout: either no cgroups at all (absent) or a sane report.
TEST(CgroupCollectorLiveTest, ReadsThisHost) {
  Collected c = CollectOnce(CollectorContext());
  if (IsAbsent(c.status)) {
    GTEST_SKIP() << "no cgroup filesystem here: " << c.status.ToString();
  }
  ASSERT_TRUE(c.status.ok()) << c.status.ToString();

  EXPECT_GE(*Value(c.batch, "vigil_cgroup_monitored_cgroups"), 1.0);
  ASSERT_NE(Find(c.batch, "vigil_cgroup_layout_info", ""), nullptr);
  for (const Sample& s : c.batch.samples) {
    EXPECT_GE(s.value, 0.0) << s.desc->name;
  }
}

}  // namespace
}  // namespace vigil
