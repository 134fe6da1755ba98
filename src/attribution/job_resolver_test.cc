// SPDX-License-Identifier: Apache-2.0
#include "attribution/job_resolver.h"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

const std::string kTree = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_attribution";
const std::vector<std::string> kAllowList = {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                                             "VIGIL_JOB_ID", "VIGIL_TEAM",
                                             "VIGIL_MODEL",  "VIGIL_FRAMEWORK"};

JobResolverOptions FixtureOptions(const std::string& root = kTree) {
  return JobResolverOptions{root + "/proc", kAllowList, root + "/mapping.toml"};
}

struct ResolveCase {
  int pid;
  JobInfo expected;
};

// Hand-derived from tests/data/hosts/cg_attribution (see each pid's cgroup, status, environ).
// Fields: job_id, user, team, model, framework, cgroup, rule.
const ResolveCase kCases[] = {
    // SLURM v1 path; uid 0 names root; the mapping file adds team/model/framework for job 1234.
    {100,
     {"1234", "root", "llm", "llama-70b", "pytorch", "/slurm/uid_4242/job_1234/step_0/task_0",
      "slurm_cgroup"}},
    // Same cgroup; its SLURM_JOB_ID=9999 loses to the cgroup rule. uid 4242 has no passwd entry.
    {101,
     {"1234", "4242", "llm", "llama-70b", "pytorch", "/slurm/uid_4242/job_1234/step_0/task_0",
      "slurm_cgroup"}},
    {110,
     {"77", "4242", "", "", "", "/system.slice/slurmstepd.scope/job_77/step_0/user/task_0",
      "slurm_cgroup"}},
    // Kubernetes pod UID, underscores turned back into dashes; VIGIL_TEAM from the environment.
    {300,
     {"0a1b2c3d-4e5f-6789-abcd-ef0123456789", "root", "vision", "", "",
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/cri-containerd-f00d.scope",
      "k8s_pod"}},
    // systemd unit; the environment's metadata is applied before the mapping file's.
    {400,
     {"trainer.service", "root", "search", "ranker-v2", "jax", "/system.slice/trainer.service",
      "systemd_unit"}},
    // A login session names no job; TORCHELASTIC_RUN_ID does (and implies pytorch).
    {500,
     {"run-7", "4242", "", "llama-8b", "pytorch", "/user.slice/user-4242.slice/session-3.scope",
      "env"}},
    // Only the mapping file's user+cgroup rule identifies it.
    {600, {"adhoc-4242", "4242", "research", "", "", "/", "mapping_file"}},
    {700, {"555", "4242", "", "", "", "/user.slice/user-4242.slice/session-9.scope", "env"}},
    {702, {"", "4242", "", "", "", "/user.slice/user-4242.slice/session-9.scope", "none"}},
};

TEST(JobResolverTest, ResolvesEveryFixtureProcessByTheFirstMatchingRule) {
  JobResolver resolver(FixtureOptions());
  ASSERT_TRUE(resolver.LoadMapping().ok());
  for (const ResolveCase& c : kCases) {
    SCOPED_TRACE(c.pid);
    StatusOr<JobInfo> info = resolver.Resolve(c.pid);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->job_id, c.expected.job_id);
    EXPECT_EQ(info->user, c.expected.user);
    EXPECT_EQ(info->team, c.expected.team);
    EXPECT_EQ(info->model, c.expected.model);
    EXPECT_EQ(info->framework, c.expected.framework);
    EXPECT_EQ(info->cgroup, c.expected.cgroup);
    EXPECT_EQ(info->rule, c.expected.rule);
  }
}

TEST(JobResolverTest, EnvironmentIsNeverReadWithoutAnAllowList) {
  JobResolverOptions options;
  options.proc_root = kTree + "/proc";
  JobResolver resolver(options);

  StatusOr<JobInfo> info = resolver.Resolve(500);

  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->job_id, "");
  EXPECT_EQ(info->model, "");
  EXPECT_EQ(info->rule, "none");
}

TEST(JobResolverTest, RegistrationWinsAndIsInheritedByDescendants) {
  JobResolver resolver(FixtureOptions());
  ASSERT_TRUE(resolver.LoadMapping().ok());
  ASSERT_TRUE(resolver.Resolve(702).ok());  // Cached before the registration: must be redone.

  JobInfo registered;
  registered.job_id = "reg-1";
  registered.team = "t1";
  resolver.RecordRegistration(700, registered);

  for (int pid : {700, 701, 702}) {
    SCOPED_TRACE(pid);
    StatusOr<JobInfo> info = resolver.Resolve(pid);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->job_id, "reg-1");  // Over 700's SLURM_JOB_ID=555.
    EXPECT_EQ(info->team, "t1");
    EXPECT_EQ(info->user, "4242");  // Not in the registration: from the uid.
    EXPECT_EQ(info->rule, "ipc_registration");
  }
  StatusOr<JobInfo> unrelated = resolver.Resolve(600);
  ASSERT_TRUE(unrelated.ok());
  EXPECT_EQ(unrelated->rule, "mapping_file");
}

TEST(JobResolverTest, AClaimOfAnotherJobNeverOutranksTheSchedulerCgroup) {
  JobResolver resolver(FixtureOptions());
  ASSERT_TRUE(resolver.LoadMapping().ok());
  JobInfo claim;
  claim.job_id = "9999";
  claim.team = "evil";
  claim.model = "forged";

  JobInfo settled = resolver.SettleClaim(100, claim);  // In SLURM job 1234.

  EXPECT_EQ(settled.job_id, "1234");
  EXPECT_EQ(settled.rule, "slurm_cgroup");
  EXPECT_EQ(settled.team, "llm");  // The mapping file's; the claim's labels are dropped whole.
  EXPECT_EQ(settled.model, "llama-70b");
  EXPECT_EQ(*resolver.Resolve(100), settled);
}

TEST(JobResolverTest, AClaimThatAgreesWithTheCgroupOnlyFillsEmptyLabels) {
  JobResolver resolver(FixtureOptions());
  ASSERT_TRUE(resolver.LoadMapping().ok());
  JobInfo claim;
  claim.job_id = "1234";
  claim.team = "other";
  claim.framework = "jax";
  JobInfo agreeing;
  agreeing.job_id = "77";
  agreeing.model = "m77";

  EXPECT_EQ(resolver.SettleClaim(101, claim).team, "llm");           // The operator's stands.
  EXPECT_EQ(resolver.SettleClaim(101, claim).framework, "pytorch");  // So does this.
  JobInfo job77 = resolver.SettleClaim(110, agreeing);
  EXPECT_EQ(job77.job_id, "77");
  EXPECT_EQ(job77.rule, "slurm_cgroup");
  EXPECT_EQ(job77.model, "m77");
}

TEST(JobResolverTest, AProcessOutsideAJobsCgroupCannotClaimThatJob) {
  JobResolver resolver(FixtureOptions());
  ASSERT_TRUE(resolver.LoadMapping().ok());
  ASSERT_EQ(resolver.Resolve(100)->job_id, "1234");  // The scheduler runs job 1234 here.
  JobInfo claim;
  claim.job_id = "1234";
  claim.team = "evil";
  claim.model = "forged";

  JobInfo settled = resolver.SettleClaim(702, claim);  // A login session: no job.

  EXPECT_EQ(settled.job_id, "");
  EXPECT_EQ(settled.team, "");
  EXPECT_EQ(settled.rule, "none");
  EXPECT_EQ(resolver.Resolve(100)->team, "llm");
  EXPECT_EQ(resolver.Resolve(100)->model, "llama-70b");
  // A job id no cgroup gives stays the process's own, unverified word.
  claim.job_id = "my-run";
  settled = resolver.SettleClaim(702, claim);
  EXPECT_EQ(settled.job_id, "my-run");
  EXPECT_EQ(settled.rule, "ipc_registration");
  EXPECT_EQ(settled.team, "evil");
}

TEST(JobResolverTest, AClaimMadeBeforeTheSchedulerJobWasSeenIsWithdrawn) {
  JobResolver resolver(FixtureOptions());
  JobInfo claim;
  claim.job_id = "77";
  ASSERT_EQ(resolver.SettleClaim(702, claim).job_id, "77");  // Nothing knows job 77 yet.

  ASSERT_EQ(resolver.Resolve(110)->job_id, "77");  // Its real process is seen.

  EXPECT_EQ(resolver.Resolve(702)->job_id, "");
}

TEST(JobResolverTest, EnvironmentCannotNameAJobTheSchedulerRunsElsewhere) {
  JobResolver resolver(FixtureOptions());
  ASSERT_EQ(resolver.Resolve(700)->job_id, "555");  // SLURM_JOB_ID=555 in its environment.

  EXPECT_EQ(resolver.ResolveCgroup("/slurm/uid_4242/job_555/step_0").job_id, "555");

  EXPECT_NE(resolver.Resolve(700)->job_id, "555");
}

TEST(JobResolverTest, MissingProcessIsNotFound) {
  JobResolver resolver(FixtureOptions());

  EXPECT_EQ(resolver.Resolve(99999).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(resolver.Resolve(0).status().code(), StatusCode::kInvalidArgument);
}

TEST(JobResolverTest, BadMappingKeepsThePreviousOne) {
  JobResolverOptions options;
  options.proc_root = kTree + "/proc";
  options.mapping_file = "/nonexistent.toml";
  JobResolver resolver(options);

  EXPECT_EQ(resolver.LoadMapping().code(), StatusCode::kNotFound);
  StatusOr<JobInfo> info = resolver.Resolve(600);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->rule, "none");
}

TEST(JobResolverTest, ResolvesABareCgroupPath) {
  JobResolver resolver(FixtureOptions());
  ASSERT_TRUE(resolver.LoadMapping().ok());

  JobInfo slurm = resolver.ResolveCgroup("/slurm/uid_0/job_1234");
  JobInfo plain = resolver.ResolveCgroup("/system.slice");

  EXPECT_EQ(slurm.job_id, "1234");
  EXPECT_EQ(slurm.user, "root");
  EXPECT_EQ(slurm.team, "llm");
  EXPECT_EQ(slurm.rule, "slurm_cgroup");
  EXPECT_EQ(plain.job_id, "");
  EXPECT_EQ(plain.rule, "none");
}

// Works on a writable copy of the fixture tree.
class JobResolverTmpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil_attr_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::copy(kTree, dir_, std::filesystem::copy_options::recursive);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Rewrite(int pid, const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(dir_ + "/proc/" + std::to_string(pid) + "/" + name, text).ok());
  }
  static std::string Stat(int pid, int start) {
    std::string line = std::to_string(pid) + " (python3) S 1";
    for (int field = 5; field <= 52; ++field) {
      line += field == 22 ? " " + std::to_string(start) : " 0";
    }
    return line + "\n";
  }

  std::string dir_;
};

TEST_F(JobResolverTmpTest, ReusedPidIsNeverGivenTheOldJob) {
  JobResolver resolver(FixtureOptions(dir_));
  ASSERT_TRUE(resolver.LoadMapping().ok());
  ASSERT_EQ(resolver.Resolve(600)->job_id, "adhoc-4242");

  // Same start time: the cached answer stands even though the cgroup file changed.
  Rewrite(600, "cgroup", "0::/slurm/uid_4242/job_31337/step_0\n");
  EXPECT_EQ(resolver.Resolve(600)->job_id, "adhoc-4242");

  // A new process with the same pid (different start time) is resolved afresh.
  Rewrite(600, "stat", Stat(600, 9999999));
  StatusOr<JobInfo> reused = resolver.Resolve(600);
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(reused->job_id, "31337");
  EXPECT_EQ(reused->rule, "slurm_cgroup");
}

TEST_F(JobResolverTmpTest, VanishedProcessIsNotFoundAndPruned) {
  JobResolver resolver(FixtureOptions(dir_));
  ASSERT_TRUE(resolver.Resolve(110).ok());
  ASSERT_EQ(resolver.CachedJobs().size(), 1u);

  std::filesystem::remove_all(dir_ + "/proc/110");

  EXPECT_EQ(resolver.Resolve(110).status().code(), StatusCode::kNotFound);
  resolver.Prune();
  EXPECT_TRUE(resolver.CachedJobs().empty());
}

TEST_F(JobResolverTmpTest, RegistrationOfAReusedPidDoesNotApply) {
  JobResolver resolver(FixtureOptions(dir_));
  JobInfo registered;
  registered.job_id = "old";
  resolver.RecordRegistration(701, registered);
  ASSERT_EQ(resolver.Resolve(702)->job_id, "old");

  Rewrite(701, "stat", Stat(701, 4242424));  // 701 exited and its pid was reused.
  resolver.Prune();

  EXPECT_EQ(resolver.Resolve(702)->rule, "none");
}

}  // namespace
}  // namespace vigil
