// SPDX-License-Identifier: Apache-2.0
// deploy/slurm's prolog and epilog against the real vigild and a fake scontrol (a script that
// answers `show job -o ID` and `show hostnames` as SLURM prints them). The fake NVML library puts
// a process of the fixture job 4500 (tests/data/hosts/cg_k8s_slurm, cgroup .../job_4500/...) on a
// GPU: after the prolog its GPU series carry the team (the job's Account) and the model and
// framework from its comment, and the tracing policy its comment asks for is waiting; after the
// epilog the policy is gone and the job's rule is out of the mapping file, the site's rules kept.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/wait_for.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

const std::string kProc = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_k8s_slurm/proc";
const std::string kSlurm = std::string(VIGIL_TEST_DATA_DIR) + "/../../deploy/slurm";

constexpr const char* kNvml = R"(gpus 1
driver 550.54.15
gpu 0 name NVIDIA H100 80GB HBM3
gpu 0 uuid GPU-aaaaaaaa-0000-0000-0000-000000000000
gpu 0 util 90
gpu 0 mem_total 85899345920
gpu 0 mem_used 42949672960
gpu 0 power_mw 500000
gpu 0 procs 903:1000000
)";

// scontrol as SLURM 23.x prints it with -o (one line; Comment= may hold spaces).
constexpr const char* kScontrol = R"(#!/bin/sh
case "$1 $2" in
  "show job")
    [ "$3" = "-o" ] && id=$4 || id=$3
    if [ "$id" != 4500 ]; then echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; fi
    echo "JobId=4500 JobName=train UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=1 Nice=0 Account=search QOS=normal JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:01 TimeLimit=01:00:00 Partition=gpu NodeList=node01 NumNodes=1 NumCPUs=8 Comment=model=llama-70b framework=pytorch vigil-trace=3600 WorkDir=/home/alice Power="
    ;;
  "show hostnames") hostname -s ;;
  *) echo "fake scontrol: unexpected $*" >&2; exit 1 ;;
esac
)";

class VigildSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = daemon_.dir();
    ASSERT_TRUE(MakeDirs(dir + "/bin").ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/bin/scontrol", kScontrol).ok());
    ASSERT_EQ(chmod((dir + "/bin/scontrol").c_str(), 0755), 0);
    ASSERT_TRUE(MakeDirs(dir + "/etc/mapping.d").ok());
    ASSERT_TRUE(WriteFileAtomic(dir + "/etc/mapping.d/50-site.toml",
                                "[[rule]]\nmatch_user = \"^svc-batch$\"\nteam = \"site-batch\"\n")
                    .ok());
    mapping_ = dir + "/etc/mapping.toml";
    ASSERT_TRUE(WriteFileAtomic(mapping_, "").ok());  // vigild needs it at start.
    ASSERT_TRUE(WriteFileAtomic(dir + "/nvml.script", kNvml).ok());
    setenv("FAKE_NVML_SCRIPT", (dir + "/nvml.script").c_str(), 1);
    ASSERT_TRUE(daemon_.Spawn({"--interval", "1s", "--gpu-backend", "nvml", "--nvml-library",
                               std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1",
                               "--proc-root", kProc, "--mapping-file", mapping_}));
    ASSERT_TRUE(daemon_.WaitHealthy()) << daemon_.Log();
  }

  void TearDown() override {
    // A policy left waiting by a failed check: end its process group.
    auto pid = ReadSmallFile(daemon_.dir() + "/run/jobs/4500.trace.pid", 64);
    if (pid.ok() && std::atoi(pid->c_str()) > 0) kill(-std::atoi(pid->c_str()), SIGTERM);
  }

  // Runs a deploy/slurm script as slurmd would, for job `job`; its exit status.
  int RunScript(const std::string& script, const std::string& job, std::string* out) {
    const std::string dir = daemon_.dir();
    const std::string cmd = "env PATH='" + dir + "/bin':\"$PATH\" SLURM_JOB_ID='" + job +
                            "' SLURM_JOB_NODELIST=node01 VIGIL_BIN='" + std::string(VIGIL_BIN_DIR) +
                            "/vigil' VIGILD_RPC='" + daemon_.rpc_target() +
                            "' VIGIL_SLURM_MAPPING='" + mapping_ + "' VIGIL_SLURM_SITE_DIR='" +
                            dir + "/etc/mapping.d' VIGIL_SLURM_RUN_DIR='" + dir + "/run' bash '" +
                            kSlurm + "/" + script + "' 2>&1";
    out->clear();
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return -1;
    char buf[4096];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out->append(buf, n);
    const int raw = pclose(pipe);
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }

  // A /metrics line of vigil_gpu_allocated_seconds_total for which `cond` holds, once there is
  // one (a relabelled job is a new series beside the old one); else the last such line seen.
  std::string WaitForJobLine(const std::function<bool(const std::string&)>& cond) {
    std::string line;
    WaitFor(
        [&] {
          const std::string body = daemon_.Get("/metrics").body;
          for (size_t at = body.find("vigil_gpu_allocated_seconds_total{"); at != std::string::npos;
               at = body.find("vigil_gpu_allocated_seconds_total{", at + 1)) {
            line = body.substr(at, body.find('\n', at) - at);
            if (cond(line)) return true;
          }
          return false;
        },
        60, std::chrono::milliseconds(100));
    return line;
  }

  static bool Alive(int pid) {
    auto stat = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!stat.ok()) return false;
    const size_t paren = stat->rfind(')');
    return paren != std::string::npos && stat->substr(paren + 2, 1) != "Z";
  }

  VigildProcess daemon_;
  std::string mapping_;
};

TEST_F(VigildSlurmTest, PrologLabelsTheJobAndStartsItsPolicyEpilogUndoesBoth) {
  std::string line = WaitForJobLine(
      [](const std::string& l) { return l.find("job_id=\"4500\"") != std::string::npos; });
  ASSERT_NE(line.find("job_id=\"4500\""), std::string::npos) << line << daemon_.Log();
  EXPECT_NE(line.find("team=\"\""), std::string::npos) << line;  // Not labelled before the prolog.

  std::string out;
  ASSERT_EQ(RunScript("vigil-prolog.sh", "4500", &out), 0) << out;
  line = WaitForJobLine(
      [](const std::string& l) { return l.find("team=\"search\"") != std::string::npos; });
  EXPECT_NE(line.find("team=\"search\""), std::string::npos) << line << "\n"
                                                             << out << daemon_.Log();
  EXPECT_NE(line.find("model=\"llama-70b\""), std::string::npos) << line;
  EXPECT_NE(line.find("framework=\"pytorch\""), std::string::npos) << line;

  auto mapping = ReadSmallFile(mapping_, 1 << 20);
  ASSERT_TRUE(mapping.ok());
  EXPECT_NE(mapping->find("match_job_id = \"^4500$\""), std::string::npos) << *mapping;
  EXPECT_NE(mapping->find("site-batch"), std::string::npos) << *mapping;
  EXPECT_LT(mapping->find("4500"), mapping->find("site-batch")) << *mapping;  // Jobs first.

  const std::string pid_file = daemon_.dir() + "/run/jobs/4500.trace.pid";
  auto pid_text = ReadSmallFile(pid_file, 64);
  ASSERT_TRUE(pid_text.ok()) << out;
  const int pid = std::atoi(pid_text->c_str());
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(Alive(pid)) << "the tracing policy (vigil-trace=3600) is not waiting";

  ASSERT_EQ(RunScript("vigil-epilog.sh", "4500", &out), 0) << out;
  EXPECT_TRUE(WaitFor([&] { return !Alive(pid); }, 30)) << "tracing policy still running";
  EXPECT_NE(access(pid_file.c_str(), F_OK), 0);
  mapping = ReadSmallFile(mapping_, 1 << 20);
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ(mapping->find("4500"), std::string::npos) << *mapping;
  EXPECT_NE(mapping->find("site-batch"), std::string::npos) << *mapping;
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string log = daemon_.Log();
        size_t n = 0;
        for (size_t at = log.find("mapping file reloaded"); at != std::string::npos;
             at = log.find("mapping file reloaded", at + 1)) {
          ++n;
        }
        return n >= 2;
      },
      30))
      << daemon_.Log();
  EXPECT_TRUE(daemon_.running()) << daemon_.Log();
}

TEST_F(VigildSlurmTest, AnUnknownJobOrNoJobIdLeavesEverythingAsItWasAndExitsZero) {
  std::string out;
  EXPECT_EQ(RunScript("vigil-prolog.sh", "999", &out), 0) << out;
  EXPECT_NE(out.find("scontrol show job failed"), std::string::npos) << out;
  EXPECT_EQ(RunScript("vigil-prolog.sh", "12ab", &out), 0) << out;
  EXPECT_NE(out.find("no SLURM_JOB_ID"), std::string::npos) << out;
  EXPECT_EQ(RunScript("vigil-epilog.sh", "999", &out), 0) << out;
  auto mapping = ReadSmallFile(mapping_, 1 << 20);
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ(*mapping, "");
}

}  // namespace
}  // namespace vigil::testing
