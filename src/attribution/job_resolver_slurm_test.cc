// SPDX-License-Identifier: Apache-2.0
// Slurm 26.05 SLUID-named job cgroups end to end: the fixture tree tests/data/hosts/cg_k8s_slurm
// and a fake `scontrol` put first on PATH.
#include <stdlib.h>

#include <gtest/gtest.h>

#include "attribution/job_resolver.h"
#include "attribution/scratch_dir.h"

namespace vigil {
namespace {

const std::string kProc = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_k8s_slurm/proc";

// Puts `dir` first on PATH for the test's lifetime.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& dir) {
    const char* old = getenv("PATH");
    old_ = old ? old : "";
    setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~ScopedPath() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

JobResolverOptions Options() {
  JobResolverOptions options;
  options.proc_root = kProc;
  options.env_allow_list = {"SLURM_JOB_ID"};
  options.kubelet.socket_path = "";
  options.slurm.call_deadline_ns = 30'000'000'000;
  return options;
}

constexpr char kScontrol[] =
    "#!/bin/sh\n"
    "# scontrol listpids as slurmd answers it on this node\n"
    "[ \"$1\" = listpids ] || exit 2\n"
    "echo 'PID      JOBID    STEPID   LOCALID GLOBALID'\n"
    "echo '900      4321     0        0       0'\n";

TEST(JobResolverSlurmTest, SluidCgroupsResolveThroughScontrolThenTheEnvironment) {
  ScratchDir bin;
  bin.Write("scontrol", kScontrol, true);
  ScopedPath path(bin.path());
  JobResolver resolver(Options());

  struct Case {
    int pid;
    std::string job_id;
  } cases[] = {
      {900, "4321"},            // scontrol listpids.
      {901, "4400"},            // Not in listpids; its SLURM_JOB_ID.
      {902, "s5K1KKYAYG5D00"},  // Nobody says: the SLUID names the job.
      {903, "4500"},            // CgroupJobIdPaths=yes.
      {904, "sQ7W3ZJ0M2K8P0"},  // Claims 4321, which scontrol gave sEKNKTV3WPV500.
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pid);
    StatusOr<JobInfo> info = resolver.Resolve(c.pid);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->job_id, c.job_id);
    EXPECT_EQ(info->rule, "slurm_cgroup");
  }
  // The job's bare cgroup (the cgroup collector's view) is named by what its process taught.
  EXPECT_EQ(resolver.ResolveCgroup("/system.slice/slurmstepd.scope/sEKNKTV3WPV500").job_id, "4321");
  EXPECT_EQ(resolver.ResolveCgroup("/system.slice/slurmstepd.scope/sFNDM35NQ39R00").job_id, "4400");
  EXPECT_TRUE(resolver.Degradations().empty());
}

TEST(JobResolverSlurmTest, WithoutScontrolTheEnvironmentAndTheSluidNameTheJob) {
  ScratchDir bin;  // Empty: PATH holds no scontrol of ours, and the real one is not wanted.
  JobResolverOptions options = Options();
  options.slurm.scontrol = bin.Sub("scontrol");  // Absent.
  JobResolver resolver(options);

  EXPECT_EQ(resolver.Resolve(900)->job_id, "sEKNKTV3WPV500");
  EXPECT_EQ(resolver.Resolve(901)->job_id, "4400");
  const std::vector<std::string> degraded = resolver.Degradations();
  ASSERT_EQ(degraded.size(), 1u);
  EXPECT_NE(degraded[0].find("slurm attribution"), std::string::npos) << degraded[0];
  EXPECT_NE(degraded[0].find("not found"), std::string::npos) << degraded[0];
}

TEST(JobResolverSlurmTest, AHungScontrolCostsOneDeadline) {
  ScratchDir bin;
  bin.Write("scontrol", "#!/bin/sh\nsleep 60\n", true);
  ScopedPath path(bin.path());
  JobResolverOptions options = Options();
  options.slurm.call_deadline_ns = 500'000'000;
  JobResolver resolver(options);

  StatusOr<JobInfo> info = resolver.Resolve(901);

  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->job_id, "4400");  // The environment, after scontrol timed out.
  EXPECT_FALSE(resolver.Degradations().empty());
}

}  // namespace
}  // namespace vigil
