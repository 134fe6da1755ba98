// SPDX-License-Identifier: Apache-2.0
// vigild with GPUs, end to end: the real daemon loads the fake libnvidia-ml.so.1 (tests/fakes)
// through --nvml-library, and /metrics, the control RPC, `vigil top` and `vigil gpu pause|resume`
// show what the fake's script says. Also the simulated backend behind `make demo`.
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

constexpr const char* kScript = R"(gpus 2
driver 550.54.15
gpu 0 name NVIDIA H100 80GB HBM3
gpu 0 uuid GPU-aaaaaaaa-0000-0000-0000-000000000000
gpu 0 util 90
gpu 0 mem_total 85899345920
gpu 0 mem_used 42949672960
gpu 0 power_mw 500000
gpu 0 energy_mj 1000000 1500000 2000000 2500000 3000000
gpu 0 sm_clock 1980
gpu 0 gpm 1
gpu 0 gpm_sm_active 80
gpu 0 gpm_hmma 50
gpu 0 procs 4242:1000000
gpu 1 name NVIDIA H100 80GB HBM3
gpu 1 uuid GPU-bbbbbbbb-0000-0000-0000-000000000000
gpu 1 util 0
gpu 1 mem_total 85899345920
gpu 1 mem_used 0
gpu 1 power_mw 70000
)";

// Polls /metrics until `needle` shows up (the first GPU tick), with a deadline.
std::string WaitForMetric(VigildProcess& daemon, const std::string& needle) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string body;
  while (std::chrono::steady_clock::now() < deadline) {
    body = daemon.Get("/metrics").body;
    if (body.find(needle) != std::string::npos) {
      return body;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return body;
}

TEST(VigildGpuTest, FakeNvmlValuesReachMetricsRpcAndTop) {
  VigildProcess daemon;
  const std::string script = daemon.dir() + "/nvml.script";
  ASSERT_TRUE(WriteFileAtomic(script, kScript).ok());
  setenv("FAKE_NVML_SCRIPT", script.c_str(), 1);
  ASSERT_TRUE(daemon.Spawn({"--interval", "1s", "--gpu-backend", "nvml", "--nvml-library",
                            std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  const std::string body = WaitForMetric(daemon, "vigil_gpu_flops_estimated");

  EXPECT_NE(body.find("vigil_gpu_memory_total_bytes{"), std::string::npos) << body;
  EXPECT_NE(body.find("gpu_uuid=\"GPU-aaaaaaaa-0000-0000-0000-000000000000\""), std::string::npos);
  EXPECT_NE(body.find("vigil_collector_success{collector=\"gpu_devices\"} 1"), std::string::npos)
      << daemon.Log();
  auto client = RpcClient::Connect(daemon.rpc_target(), 5 * kNanosPerSecond);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto reply = client->Call(
      {{"fn", "vigilLatest"},
       {"selector",
        "vigil_gpu_memory_total_bytes{gpu_uuid=\"GPU-bbbbbbbb-0000-0000-0000-000000000000\"}"}},
      5 * kNanosPerSecond);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ((*reply)["series"].size(), 1u) << reply->dump();
  EXPECT_DOUBLE_EQ((*reply)["series"][0]["points"][0][1].get<double>(), 85899345920.0);

  std::string top;
  const int status = RunVigilCli("top --once --host " + daemon.rpc_target(), &top);
  EXPECT_EQ(status, 0) << top;
  EXPECT_NE(top.find("H100"), std::string::npos) << top;
  EXPECT_NE(top.find("GPU"), std::string::npos) << top;
}

TEST(VigildGpuTest, GpuPauseAndResumeAnswerLikeDynolog) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({"--gpu-backend", "sim"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  int status = 0;

  std::string out;
  status = RunVigilCli("gpu pause --duration 0 --host " + daemon.rpc_target(), &out);

  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("paused"), std::string::npos) << out;
  auto client = RpcClient::Connect(daemon.rpc_target(), 5 * kNanosPerSecond);
  ASSERT_TRUE(client.ok());
  auto reply = client->Call({{"fn", "dcgmProfResume"}}, 5 * kNanosPerSecond);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ((*reply)["status"], true) << reply->dump();
  status = RunVigilCli("gpu resume --host " + daemon.rpc_target(), &out);
  EXPECT_EQ(status, 0) << out;
}

TEST(VigildGpuTest, SimulatedBackendLabelsEverySampleAndAccountsJobs) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({"--interval", "1s", "--gpu-backend", "sim"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  // Accounting needs two ticks: the first only starts the integration.
  const std::string body = WaitForMetric(daemon, "vigil_gpu_allocated_seconds_total{");

  size_t gpu_lines = 0;
  size_t pos = 0;
  while ((pos = body.find("\nvigil_gpu_", pos)) != std::string::npos) {
    const size_t end = body.find('\n', pos + 1);
    const std::string line = body.substr(pos + 1, end - pos - 1);
    EXPECT_NE(line.find("simulated=\"true\""), std::string::npos) << line;
    ++gpu_lines;
    pos = end;
  }
  EXPECT_GT(gpu_lines, 8u);
  EXPECT_NE(body.find("job_id=\""), std::string::npos);
  // The framework label of the simulated fine-tuning job reaches the accounting counters.
  EXPECT_NE(body.find("job_id=\"sim-ft-2002\""), std::string::npos) << body;
  EXPECT_NE(body.find("framework=\"jax\""), std::string::npos) << body;
}

}  // namespace
}  // namespace vigil::testing
