// SPDX-License-Identifier: Apache-2.0
// Job identity spoofing over the IPC fabric, end to end: a real process (this test) sits in a
// SLURM job's cgroup of a fixture /proc tree, registers over a real socket claiming another job
// (its id, team and model) and sends absurd step reports. The daemon's wiring is reproduced:
// ProcessRegistry settles claims through JobResolver::SettleClaim, FabricServer feeds JobMetrics.
#include <unistd.h>

#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attribution/job_resolver.h"
#include "base/file_util.h"
#include "base/wait_for.h"
#include "ipc/fabric_server.h"
#include "ipc/ipc_test_util.h"
#include "kineto_spec_client.h"

namespace vigil {
namespace {

using testing_util::KinetoSpecClient;

std::string Stat(int pid) {
  std::string line = fmt::format("{} (python3) S 1", pid);
  for (int field = 5; field <= 52; ++field) {
    line += field == 22 ? " 7000" : " 0";
  }
  return line + "\n";
}

void WriteProcess(const std::string& proc, int pid, const std::string& cgroup) {
  const std::string dir = fmt::format("{}/{}", proc, pid);
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/stat", Stat(pid)).ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/status", fmt::format("Name:\tpython3\nPid:\t{}\nPPid:\t1\n"
                                                           "NSpid:\t{}\nUid:\t4242\t4242\t4242\t"
                                                           "4242\n",
                                                           pid, pid))
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/cgroup", "0::" + cgroup + "\n").ok());
}

class JobClaimsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string proc = root_.path() + "/proc";
    // This process runs in SLURM job 555; pid 100 is the victim, in job 1234.
    WriteProcess(proc, getpid(), "/system.slice/slurmstepd.scope/job_555/step_0/user/task_0");
    WriteProcess(proc, 100, "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0");
    ASSERT_TRUE(WriteFileAtomic(root_.path() + "/mapping.toml",
                                "[[rule]]\nmatch_job_id = \"^1234$\"\nteam = \"victims\"\n"
                                "model = \"their-model\"\n")
                    .ok());
    resolver_ =
        std::make_shared<JobResolver>(JobResolverOptions{proc, {}, root_.path() + "/mapping.toml"});
    ASSERT_TRUE(resolver_->LoadMapping().ok());
    ASSERT_EQ(resolver_->Resolve(100)->team, "victims");

    ProcessRegistryOptions ro;

    ro.match_only_live = false;  // The registered pids are made up.
    ro.proc_root = proc;
    ro.settle_claim = [r = resolver_](int32_t pid, const JobInfo& claim) {
      return r->SettleClaim(pid, claim);
    };
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
    metrics_ = std::make_unique<JobMetrics>(clock_.Fn());
    server_ = std::make_unique<FabricServer>(registry_.get(), metrics_.get());
    options_.ipc_name = fmt::format("vigil-claims-test-{}", getpid());
    ASSERT_TRUE(server_->Start(options_).ok());
    client_ = std::make_unique<KinetoSpecClient>(fmt::format("claims-client-{}", getpid()),
                                                 options_.ipc_name);
    ASSERT_TRUE(client_->ok());
  }

  // Sends a vigil.* message and returns the parsed reply.
  nlohmann::json Exchange(const std::string& type, const std::string& payload) {
    EXPECT_TRUE(client_->Send(type, payload));
    auto reply = client_->Receive(2000);
    return reply ? nlohmann::json::parse(reply->second, nullptr, false) : nlohmann::json();
  }

  // Sends fire-and-forget datagrams and waits until the server has handled them.
  void SendAll(const std::string& type, const std::vector<std::string>& payloads) {
    const uint64_t before = registry_->counters().datagrams.load();
    for (const std::string& p : payloads) {
      ASSERT_TRUE(client_->Send(type, p));
    }
    ASSERT_TRUE(WaitFor(
        [&] { return registry_->counters().datagrams.load() >= before + payloads.size(); }));
  }

  MetricBatch Collect() {
    MetricBatch batch;
    MetricWriter out(&batch);
    EXPECT_TRUE(metrics_->Collect(out).ok());
    return batch;
  }

  testing_util::TempDir root_;
  testing_util::FakeClock clock_;
  std::shared_ptr<JobResolver> resolver_;
  std::unique_ptr<ProcessRegistry> registry_;
  std::unique_ptr<JobMetrics> metrics_;
  std::unique_ptr<FabricServer> server_;
  FabricServerOptions options_;
  std::unique_ptr<KinetoSpecClient> client_;
};

TEST_F(JobClaimsTest, AProcessClaimingAnotherJobStaysInItsCgroupJob) {
  const nlohmann::json reg{{"pid", getpid()},   {"job_id", "1234"},   {"team", "evil"},
                           {"model", "forged"}, {"peak_flops", 1e15}, {"gpu", 0}};
  const nlohmann::json reply = Exchange("vigil.reg", reg.dump());
  EXPECT_EQ(reply["ok"], true);
  EXPECT_EQ(reply["job_id"], "555");

  StatusOr<JobInfo> self = resolver_->Resolve(getpid());
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->job_id, "555");
  EXPECT_EQ(self->rule, "slurm_cgroup");
  EXPECT_EQ(self->team, "");  // The claim's labels were for a job it is not in.
  StatusOr<JobInfo> victim = resolver_->Resolve(100);
  ASSERT_TRUE(victim.ok());
  EXPECT_EQ(victim->team, "victims");
  EXPECT_EQ(victim->model, "their-model");

  // Kineto's integer claim does not reach the victim's traces either.
  EXPECT_EQ(client_->RegisterContext(0, getpid(), 1234), 1);
  EXPECT_TRUE(registry_->Match("1234", {}).empty());
  EXPECT_EQ(registry_->Match("555", {}).size(), 1u);
}

TEST_F(JobClaimsTest, AbsurdStepReportsAreRefusedAndMetricsStayFinite) {
  const nlohmann::json reg{{"pid", getpid()}, {"job_id", "1234"}, {"peak_flops", 1e15}};
  ASSERT_EQ(Exchange("vigil.reg", reg.dump())["ok"], true);
  SendAll("vigil.step",
          {R"({"steps":1,"step_seconds":1,"model_flops":1e999})",     // Overflows: not JSON.
           R"({"steps":1,"step_seconds":1,"model_flops":1e300})",     // Above any model.
           R"({"steps":1,"step_seconds":1e-300,"model_flops":1e9})",  // MFU far above 1.
           R"({"steps":1,"step_seconds":0,"model_flops":1e9})",
           R"({"steps":1,"step_seconds":1e999,"model_flops":1e9})",
           R"({"steps":1e300,"step_seconds":1,"model_flops":1e9})",
           R"({"steps":1,"step_seconds":1,"input_bytes":1e300})",
           R"({"steps":1,"step_seconds":0.5,"model_flops":2e14,"input_bytes":1000})"});
  const IpcCounters& c = registry_->counters();
  EXPECT_EQ(c.refused_steps.load(), 5u);
  EXPECT_EQ(c.malformed.load(), 2u);  // The two 1e999: the parser refuses numbers it cannot hold.

  const MetricBatch batch = Collect();
  ASSERT_FALSE(batch.samples.empty());
  for (const Sample& s : batch.samples) {
    SCOPED_TRACE(s.desc->name);
    EXPECT_TRUE(std::isfinite(s.value));
    EXPECT_EQ(LabelValue(s.labels, "job_id"), "555");  // Never the claimed job.
    if (s.desc == &kJobMfuRatio) {
      EXPECT_DOUBLE_EQ(s.value, 0.4);  // 2e14 FLOP in 0.5 s over a 1e15 FLOP/s peak.
    }
    if (s.desc == &kJobModelFlops) {
      EXPECT_DOUBLE_EQ(s.value, 2e14);
    }
  }
}

TEST_F(JobClaimsTest, RegistrationWithAnAbsurdPeakIsRefused) {
  SendAll("vigil.reg", {fmt::format(R"({{"pid":{},"peak_flops":1e999}})", getpid()),
                        fmt::format(R"({{"pid":{},"gpu":1e300}})", getpid()), R"({"pid":1e300})"});
  EXPECT_EQ(registry_->size(), 0u);
  EXPECT_EQ(registry_->counters().malformed.load(), 3u);
}

}  // namespace
}  // namespace vigil
