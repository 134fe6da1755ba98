// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_layout.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "attribution/cgroup_path_rules.h"
#include "base/file_util.h"
#include "collectors/cgroup/cgroup_stats.h"

namespace vigil {
namespace {

const std::string kHosts = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/";

HostPaths Fixture(const std::string& name) {
  HostPaths paths;
  paths.proc_root = kHosts + name + "/proc";
  paths.sys_root = kHosts + name + "/sys";
  return paths;
}

TEST(CgroupLayoutTest, PureV2) {
  CgroupLayout layout = ParseCgroupMounts(
      "sysfs /sys sysfs rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n", "/host/sys");

  EXPECT_EQ(layout.kind, CgroupLayout::Kind::kV2);
  EXPECT_EQ(layout.unified, "/host/sys/fs/cgroup");
  EXPECT_TRUE(layout.v1.empty());
}

TEST(CgroupLayoutTest, V1WithCombinedControllersAndNamedHierarchy) {
  CgroupLayout layout = ParseCgroupMounts(
      "tmpfs /sys/fs/cgroup tmpfs ro,nosuid 0 0\n"
      "cgroup /sys/fs/cgroup/systemd cgroup rw,nosuid,xattr,name=systemd 0 0\n"
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,nodev,noexec,relatime,cpu,cpuacct 0 0\n"
      "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0\n",
      "/sys");

  EXPECT_EQ(layout.kind, CgroupLayout::Kind::kV1);
  EXPECT_EQ(layout.V1Root("cpu"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(layout.V1Root("cpuacct"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(layout.V1Root("memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(layout.V1Root("name=systemd"), "/sys/fs/cgroup/systemd");
  EXPECT_EQ(layout.V1Root("blkio"), "");
  EXPECT_EQ(layout.v1.count("nosuid"), 0u);
  EXPECT_EQ(layout.v1.count("relatime"), 0u);
}

TEST(CgroupLayoutTest, MountPointsOutsideSysAreKeptAndEscapesUndone) {
  EXPECT_EQ(ResolveMountPoint("/sys/fs/cgroup/cpu", "/fx/sys"), "/fx/sys/fs/cgroup/cpu");
  EXPECT_EQ(ResolveMountPoint("/sys", "/fx/sys"), "/fx/sys");
  EXPECT_EQ(ResolveMountPoint("/cgroup\\040v1/cpu", "/fx/sys"), "/cgroup v1/cpu");
  EXPECT_EQ(ResolveMountPoint("/sysfoo", "/fx/sys"), "/sysfoo");
}

TEST(CgroupLayoutTest, NoCgroupMountIsNone) {
  EXPECT_EQ(ParseCgroupMounts("proc /proc proc rw 0 0\n", "/sys").kind, CgroupLayout::Kind::kNone);
  EXPECT_EQ(ParseCgroupMounts("", "/sys").kind, CgroupLayout::Kind::kNone);
}

// The mount table captured from a real hybrid host.
TEST(CgroupLayoutTest, DetectsTheCapturedHybridHost) {
  HostPaths paths = Fixture("cg_v1_hybrid");
  StatusOr<CgroupLayout> layout = DetectCgroupLayout(paths);

  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->kind, CgroupLayout::Kind::kHybrid);
  EXPECT_EQ(layout->unified, paths.sys_root + "/fs/cgroup/unified");
  EXPECT_EQ(layout->V1Root("cpu"), paths.sys_root + "/fs/cgroup/cpu");
  EXPECT_EQ(layout->V1Root("cpuacct"), paths.sys_root + "/fs/cgroup/cpuacct");
  EXPECT_EQ(layout->V1Root("blkio"), paths.sys_root + "/fs/cgroup/blkio");
  EXPECT_EQ(layout->V1Root("name=systemd"), paths.sys_root + "/fs/cgroup/systemd");
  EXPECT_EQ(layout->v1.size(), 9u);
}

TEST(CgroupLayoutTest, DetectsAContainersNamespaceRoot) {
  HostPaths paths = Fixture("cg_container");
  StatusOr<CgroupLayout> layout = DetectCgroupLayout(paths);

  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->kind, CgroupLayout::Kind::kV2);
  EXPECT_EQ(layout->unified, paths.sys_root + "/fs/cgroup");
}

TEST(CgroupLayoutTest, MissingMountTableIsAbsent) {
  HostPaths paths;
  paths.proc_root = "/nonexistent/proc";
  StatusOr<CgroupLayout> layout = DetectCgroupLayout(paths);

  EXPECT_TRUE(IsAbsent(layout.status())) << layout.status().ToString();
}

TEST(CgroupLayoutTest, TheAttributionTreeHasNoMountsAndIsAbsent) {
  StatusOr<CgroupLayout> layout = DetectCgroupLayout(Fixture("cg_procs"));

  EXPECT_EQ(layout.status().code(), StatusCode::kNotFound);
}

// Found by fuzz/cgroup_fuzzer: a membership outside the daemon's cgroup namespace ("0::/../x")
// was joined below the mount, so the collector read cpu.stat and memory files outside the
// hierarchy and reported them as that process's cgroup.
TEST(CgroupLayoutTest, MembershipOutsideTheNamespaceIsNotVisible) {
  char tmpl[] = "/tmp/vigil-cgroup-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string sys = tmpl;
  ASSERT_TRUE(MakeDirs(sys + "/fs/cgroup").ok());
  ASSERT_TRUE(MakeDirs(sys + "/fs/outside").ok());
  ASSERT_TRUE(WriteFileAtomic(sys + "/fs/outside/cpu.stat", "usage_usec 5000000\n").ok());
  CgroupLayout layout = ParseCgroupMounts("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n", sys);
  const ProcCgroups cgroups = ParseProcCgroup("0::/../outside\n");

  const std::string dir = layout.Dir(layout.unified, cgroups.unified);
  const CgroupStats stats = ReadCgroupStats(layout, cgroups.unified, 100);

  EXPECT_EQ(dir, "");
  EXPECT_FALSE(stats.found);
  EXPECT_FALSE(stats.cpu_usage_seconds.has_value());
  EXPECT_EQ(layout.Dir(layout.unified, "/a/b"), sys + "/fs/cgroup/a/b");
  std::filesystem::remove_all(sys);
}

}  // namespace
}  // namespace vigil
