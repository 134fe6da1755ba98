// SPDX-License-Identifier: Apache-2.0
// Continuous profiling through the real vigild: the fake libnvidia-ml.so.1 lists a busy test
// process (main -> Outer -> Middle -> HotLeaf, frame pointers) as holding a GPU, the GPU
// collector puts it on the watch list, and the daemon's continuous profiler samples it in 1 s
// windows; /api/v1/profiles, the job's folded and pprof profiles, the status reply and /metrics
// must all show it. Without --profile.continuous the routes answer 404 and the status says off.
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"
#include "workload.h"

namespace vigil::testing {
namespace {

// Polls `path` until `accept` holds for the reply, with a deadline; returns the last reply.
template <typename Accept>
HttpReply PollUntil(VigildProcess& daemon, const std::string& path, Accept accept,
                    double timeout_s = 60) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  HttpReply reply;
  while (std::chrono::steady_clock::now() < deadline) {
    reply = daemon.Get(path);
    if (accept(reply)) {
      return reply;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return reply;
}

// The job the daemon files `pid` under: vigilProcesses' job_id, "no-job" for none.
std::string JobOf(VigildProcess& daemon, int pid) {
  auto client = RpcClient::Connect(daemon.rpc_target(), 5 * kNanosPerSecond);
  if (!client.ok()) {
    return "";
  }
  auto reply = client->Call({{"fn", "vigilProcesses"}}, 5 * kNanosPerSecond);
  if (!reply.ok()) {
    return "";
  }
  for (const auto& p : (*reply)["processes"]) {
    if (p.value("pid", 0) == pid) {
      const std::string job = p.value("job_id", "");
      return job.empty() ? "no-job" : job;
    }
  }
  return "";
}

TEST(VigildProfileTest, ContinuousModeProfilesTheGpuProcessPerJob) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root: perf_event_open on another process";
  }
  VigildProcess daemon;
  const std::string job = "cp-" + std::to_string(daemon.http_port());
  WorkloadOptions busy_options;
  busy_options.env = {"VIGIL_JOB_ID=" + job};
  Workload busy({std::string(VIGIL_PROFILE_WORKLOADS) + "/hot_native_fp", "600"}, busy_options);
  ASSERT_TRUE(busy.WaitReady()) << busy.output();
  const std::string script = daemon.dir() + "/nvml.script";
  ASSERT_TRUE(WriteFileAtomic(script, "gpus 1\ngpu 0 name NVIDIA H100 80GB HBM3\ngpu 0 procs " +
                                          std::to_string(busy.pid()) + ":1000000\n")
                  .ok());
  setenv("FAKE_NVML_SCRIPT", script.c_str(), 1);
  const std::string config = daemon.dir() + "/vigild.toml";
  ASSERT_TRUE(WriteFileAtomic(config, "env_allow_list = [\"VIGIL_JOB_ID\"]\n").ok());
  ASSERT_TRUE(
      daemon.Spawn({"--config", config, "--interval", "1s", "--gpu-backend", "nvml",
                    "--nvml-library", std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1",
                    "--profile.continuous", "--profile.window", "1s", "--profile.keep", "5"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  // The env rule names the job unless this host's cgroup rules name another; ask the daemon.
  std::string expected;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (expected.empty() && std::chrono::steady_clock::now() < deadline) {
    expected = JobOf(daemon, busy.pid());
    if (expected.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_FALSE(expected.empty()) << "the GPU collector never watched the busy process\n"
                                 << daemon.Log();

  const std::string path = "/api/v1/profiles/" + expected + "?format=folded";
  const HttpReply folded = PollUntil(daemon, path, [](const HttpReply& r) {
    return r.status == 200 && r.body.find("vigil_test::HotLeaf") != std::string::npos;
  });
  ASSERT_EQ(folded.status, 200) << folded.body << "\n" << daemon.Log();
  EXPECT_EQ(folded.content_type, "text/plain; charset=utf-8");
  // Frame pointers give the whole chain, rooted at the process name.
  EXPECT_NE(folded.body.find("hot_native_fp;"), std::string::npos) << folded.body;
  EXPECT_NE(folded.body.find("main;vigil_test::Outer(double);vigil_test::Middle(unsigned long);"
                             "vigil_test::HotLeaf(unsigned long)"),
            std::string::npos)
      << folded.body;

  const HttpReply list = daemon.Get("/api/v1/profiles");
  ASSERT_EQ(list.status, 200) << list.body;
  const nlohmann::json listed = nlohmann::json::parse(list.body);
  EXPECT_EQ(listed["window_s"], 1.0);
  EXPECT_EQ(listed["keep"], 5);
  bool found = false;
  for (const auto& j : listed["jobs"]) {
    if (j["job_id"] == expected) {
      found = true;
      EXPECT_GT(j["samples"].get<uint64_t>(), 0u);
      EXPECT_GE(j["windows"].get<int>(), 1);
      EXPECT_LE(j["windows"].get<int>(), 5);
    }
  }
  EXPECT_TRUE(found) << list.body;

  const HttpReply pprof = daemon.Get("/api/v1/profiles/" + expected + "?format=pprof");
  ASSERT_EQ(pprof.status, 200) << pprof.body;
  EXPECT_EQ(pprof.content_type, "application/octet-stream");
  ASSERT_GE(pprof.body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(pprof.body[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(pprof.body[1]), 0x8b);
  const HttpReply json = daemon.Get("/api/v1/profiles/" + expected);
  ASSERT_EQ(json.status, 200);
  EXPECT_GT(nlohmann::json::parse(json.body)["total_samples"].get<uint64_t>(), 0u);

  EXPECT_EQ(daemon.Get("/api/v1/profiles/no-such-job?format=folded").status, 404);
  EXPECT_EQ(daemon.Get("/api/v1/profiles/" + expected + "?format=svg").status, 400);

  const nlohmann::json status = nlohmann::json::parse(daemon.Get("/api/v1/status").body);
  const nlohmann::json& cp = status["continuous_profile"];
  EXPECT_EQ(cp["enabled"], true) << cp.dump();
  EXPECT_EQ(cp["state"], "sampling") << cp.dump();
  EXPECT_EQ(cp["configured_hz"], 19);
  EXPECT_GE(cp["frequency_hz"].get<int>(), 1);
  EXPECT_LE(cp["frequency_hz"].get<int>(), 19);
  EXPECT_GE(cp["jobs"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(cp["cpu_budget"].get<double>(), 0.005);
#ifdef VIGIL_TEST_HAVE_CLI
  std::string text;
  ASSERT_EQ(RunVigilCli("status --host " + daemon.rpc_target(), &text), 0) << text;
  EXPECT_NE(text.find("continuous profiling: on, sampling, "), std::string::npos) << text;
  EXPECT_NE(text.find(" Hz (of 19), "), std::string::npos) << text;
  EXPECT_NE(text.find("(budget 0.500%)"), std::string::npos) << text;
#endif

  const HttpReply metrics = PollUntil(daemon, "/metrics", [&](const HttpReply& r) {
    return r.body.find("vigil_daemon_profile_samples_total{job_id=\"" + expected + "\"}") !=
           std::string::npos;
  });
  EXPECT_NE(metrics.body.find("vigil_daemon_profile_samples_total{job_id=\"" + expected + "\"}"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("vigil_daemon_profile_frequency_hertz "), std::string::npos);
  EXPECT_NE(metrics.body.find("vigil_daemon_profile_sampler_cpu_seconds_total "),
            std::string::npos);

  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.Log();
}

TEST(VigildProfileTest, OffByDefault) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({"--gpu-backend", "none"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  const HttpReply list = daemon.Get("/api/v1/profiles");
  EXPECT_EQ(list.status, 404);
  EXPECT_NE(list.body.find("continuous profiling is off"), std::string::npos) << list.body;
  EXPECT_EQ(daemon.Get("/api/v1/profiles/any?format=folded").status, 404);
  const nlohmann::json status = nlohmann::json::parse(daemon.Get("/api/v1/status").body);
  EXPECT_EQ(status["continuous_profile"], nlohmann::json({{"enabled", false}})) << status.dump();
#ifdef VIGIL_TEST_HAVE_CLI
  std::string text;
  ASSERT_EQ(RunVigilCli("status --host " + daemon.rpc_target(), &text), 0) << text;
  EXPECT_NE(text.find("continuous profiling: off\n"), std::string::npos) << text;
#endif
}

}  // namespace
}  // namespace vigil::testing
