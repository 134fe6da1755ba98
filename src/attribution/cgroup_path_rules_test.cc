// SPDX-License-Identifier: Apache-2.0
#include "attribution/cgroup_path_rules.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

struct PathCase {
  const char* path;
  const char* job_id;  // nullptr: no rule matches at all.
  const char* user;
  const char* rule;
};

constexpr PathCase kPathCases[] = {
    // SLURM, cgroup v1 (task/cgroup plugin) and v2 (slurmstepd scope).
    {"/slurm/uid_1000/job_1234/step_0/task_0", "1234", "1000", "slurm_cgroup"},
    {"/slurm/uid_1000/job_1234", "1234", "1000", "slurm_cgroup"},
    {"/slurm/uid_1000/job_1234/step_batch", "1234", "1000", "slurm_cgroup"},
    {"/slurm_node07/uid_42/job_99/step_extern", "99", "42", "slurm_cgroup"},
    {"/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0", "1234", "", "slurm_cgroup"},
    {"/system.slice/node7_slurmstepd.scope/job_5/step_0", "5", "", "slurm_cgroup"},
    // Kubernetes, cgroupfs driver (v1 style) and systemd driver (v2 style).
    {"/kubepods/burstable/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/abc123",
     "0a1b2c3d-4e5f-6789-abcd-ef0123456789", "", "k8s_pod"},
    {"/kubepods/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/abc123",
     "0a1b2c3d-4e5f-6789-abcd-ef0123456789", "", "k8s_pod"},
    {"/kubepods.slice/kubepods-burstable.slice/"
     "kubepods-burstable-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/cri-containerd-f00d.scope",
     "0a1b2c3d-4e5f-6789-abcd-ef0123456789", "", "k8s_pod"},
    {"/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice",
     "0a1b2c3d-4e5f-6789-abcd-ef0123456789", "", "k8s_pod"},
    // systemd units.
    {"/system.slice/foo.service", "foo.service", "", "systemd_unit"},
    {"/system.slice/docker-0123abcd.scope", "docker-0123abcd.scope", "", "systemd_unit"},
    {"/user.slice/user-1000.slice/user@1000.service/app.slice/bar.service", "bar.service", "1000",
     "systemd_unit"},
    {"/user.slice/user-1000.slice/session-3.scope", "", "1000", "systemd_unit"},
    {"/init.scope", "", "", "systemd_unit"},
    // Nothing to say.
    {"/", nullptr, nullptr, nullptr},
    {"/process_api/ab13a488702089c77f55408d5c2b8d98", nullptr, nullptr, nullptr},
    {"/slurm/job_1234", nullptr, nullptr, nullptr},  // No uid_N parent: not SLURM's layout.
    {"/kubepods/burstable/podXYZ/abc", nullptr, nullptr, nullptr},
};

TEST(CgroupPathRulesTest, EveryPathFormMapsToItsJob) {
  for (const PathCase& c : kPathCases) {
    SCOPED_TRACE(c.path);
    std::optional<CgroupJobMatch> m = MatchCgroupPath(c.path);
    if (c.rule == nullptr) {
      EXPECT_FALSE(m.has_value()) << m->rule << " " << m->job_id;
      continue;
    }
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->job_id, c.job_id);
    EXPECT_EQ(m->user, c.user);
    EXPECT_EQ(m->rule, c.rule);
  }
}

TEST(CgroupPathRulesTest, ParsesV1LinesWithControllerLists) {
  ProcCgroups cg = ParseProcCgroup(
      "12:cpu,cpuacct:/slurm/uid_1/job_2\n"
      "4:memory:/process_api/ab13\n"
      "1:name=systemd:/user.slice\n"
      "0::/\n");

  EXPECT_EQ(cg.v1.at("cpu"), "/slurm/uid_1/job_2");
  EXPECT_EQ(cg.v1.at("cpuacct"), "/slurm/uid_1/job_2");
  EXPECT_EQ(cg.v1.at("memory"), "/process_api/ab13");
  EXPECT_EQ(cg.v1.at("name=systemd"), "/user.slice");
  EXPECT_TRUE(cg.has_unified);
  EXPECT_EQ(cg.unified, "/");
}

TEST(CgroupPathRulesTest, PathsMayContainColons) {
  ProcCgroups cg = ParseProcCgroup("0::/system.slice/a:b.service\n");

  EXPECT_EQ(cg.unified, "/system.slice/a:b.service");
}

TEST(CgroupPathRulesTest, SkipsMalformedLines) {
  ProcCgroups cg = ParseProcCgroup("garbage\nx:cpu:/a\n3:cpu\n0::/ok\n");

  EXPECT_TRUE(cg.v1.empty());
  EXPECT_EQ(cg.unified, "/ok");
}

struct PreferCase {
  const char* text;
  const char* expected;
};

constexpr PreferCase kPreferCases[] = {
    {"0::/system.slice/foo.service\n", "/system.slice/foo.service"},  // Pure v2.
    {"0::/\n", "/"},                                                  // Container namespace root.
    // Hybrid host with an unused unified tree: the deeper v1 path wins.
    {"9:name=systemd:/user.slice\n2:cpu,cpuacct:/slurm/uid_1/job_2\n0::/\n", "/slurm/uid_1/job_2"},
    // Hybrid with systemd placing the process in the unified tree: unified wins.
    {"2:cpu,cpuacct:/other\n0::/system.slice/foo.service\n", "/system.slice/foo.service"},
    // Pure v1: cpu before name=systemd.
    {"9:name=systemd:/user.slice/x\n2:cpu,cpuacct:/a\n", "/a"},
    {"9:name=systemd:/user.slice/x\n2:cpu,cpuacct:/\n", "/user.slice/x"},
    // This build machine: everything at the root except memory.
    {"9:name=systemd:/\n4:memory:/process_api/ab13\n2:cpuacct:/\n1:cpu:/\n0::/\n", "/"},
    {"", ""},
};

TEST(CgroupPathRulesTest, PrefersUnifiedThenCpuThenSystemd) {
  for (const PreferCase& c : kPreferCases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(PreferredCgroupPath(ParseProcCgroup(c.text)), c.expected);
  }
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(CgroupPathRulesTest, Slurm2605SluidDirectoriesAreJobsWithoutAJobId) {
  struct Case {
    const char* path;
    const char* sluid;  // nullptr: not a SLUID-named job cgroup.
  } cases[] = {
      {"/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_0", "sEKNKTV3WPV500"},
      {"/system.slice/node07_slurmstepd.scope/sFNDM35NQ39R00/step_batch", "sFNDM35NQ39R00"},
      {"/system.slice/slurmstepd.scope/s5K1KKYAYG5D00", "s5K1KKYAYG5D00"},    // Bare job cgroup.
      {"/system.slice/slurmstepd.scope/opaque-id/step_extern", "opaque-id"},  // A step follows.
      {"/system.slice/slurmstepd.scope/system", nullptr},  // slurmstepd's own processes.
      {"/system.slice/slurmstepd.scope/notasluid", nullptr},
      {"/system.slice/foo.scope/sEKNKTV3WPV500/step_0", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    std::optional<CgroupJobMatch> m = MatchSlurmCgroup(c.path);
    if (c.sluid == nullptr) {
      EXPECT_TRUE(!m || m->slurm_sluid.empty());
      continue;
    }
    ASSERT_TRUE(m);
    EXPECT_EQ(m->job_id, "");
    EXPECT_EQ(m->slurm_sluid, c.sluid);
    EXPECT_EQ(m->rule, "slurm_cgroup");
  }
  // CgroupJobIdPaths=yes keeps the numeric form.
  EXPECT_EQ(MatchSlurmCgroup("/system.slice/slurmstepd.scope/job_4500/step_0")->job_id, "4500");
}

TEST(CgroupPathRulesTest, KubernetesContainerIdsComeFromTheSegmentBelowThePod) {
  const std::string id(64, 'a');
  struct Case {
    std::string path;
    std::string container_id;
  } cases[] = {
      {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_4e5f_6789_abcd_"
       "ef0123456789.slice/cri-containerd-" +
           id + ".scope",
       id},
      {"/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/crio-" + id +
           ".scope",
       id},
      {"/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/crio-conmon-" + id +
           ".scope",
       ""},  // CRI-O's monitor process, not the container.
      {"/kubepods/besteffort/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/" + id, id},
      {"/kubepods/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/docker-" + id + ".scope", id},
      {"/kubepods/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789", ""},  // The pod itself.
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    std::optional<CgroupJobMatch> m = MatchKubernetesCgroup(c.path);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->job_id, "0a1b2c3d-4e5f-6789-abcd-ef0123456789");
    EXPECT_EQ(m->k8s_container_id, c.container_id);
  }
}

}  // namespace
}  // namespace vigil
