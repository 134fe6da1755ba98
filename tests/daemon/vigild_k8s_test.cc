// SPDX-License-Identifier: Apache-2.0
// Kubernetes pod identity through the real vigild (system-call allow-list on): the fake
// libnvidia-ml.so.1 reports a process of a fixture pod (tests/data/hosts/cg_k8s_slurm, read
// through --proc-root) on its GPU, a pod-resources server on a unix socket says which container
// holds that GPU, and /metrics must carry the pod's names; without the socket `vigil status`
// says attribution fell back to cgroup paths.
#include <stdlib.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attribution/fake_pod_resources_server.h"
#include "base/file_util.h"
#include "base/time_util.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

const std::string kProc = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_k8s_slurm/proc";

constexpr const char* kScript = R"(gpus 1
driver 550.54.15
gpu 0 name NVIDIA H100 80GB HBM3
gpu 0 uuid GPU-aaaaaaaa-0000-0000-0000-000000000000
gpu 0 util 90
gpu 0 mem_total 85899345920
gpu 0 mem_used 42949672960
gpu 0 power_mw 500000
gpu 0 procs 800:1000000
)";

std::string WaitForMetric(VigildProcess& daemon, const std::string& needle) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string body;
  while (std::chrono::steady_clock::now() < deadline) {
    body = daemon.Get("/metrics").body;
    if (body.find(needle) != std::string::npos) return body;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return body;
}

bool StartDaemon(VigildProcess& daemon, const std::string& socket) {
  const std::string script = daemon.dir() + "/nvml.script";
  if (!WriteFileAtomic(script, kScript).ok()) return false;
  setenv("FAKE_NVML_SCRIPT", script.c_str(), 1);
  return daemon.Spawn({"--interval", "1s", "--gpu-backend", "nvml", "--nvml-library",
                       std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1", "--proc-root",
                       kProc, "--kubelet-socket", socket});
}

TEST(VigildK8sTest, TheGpuSeriesOfAPodsProcessCarryItsNamespacePodAndContainer) {
  VigildProcess daemon;
  auto server = FakePodResourcesServer::Start(daemon.dir() + "/kubelet.sock");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->SetPods(
      {{"trainer-0",
        "ml",
        {{"main", {{"nvidia.com/gpu", {"GPU-aaaaaaaa-0000-0000-0000-000000000000"}}}}}}});
  ASSERT_TRUE(StartDaemon(daemon, daemon.dir() + "/kubelet.sock"));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  WaitForMetric(daemon, "k8s_pod=\"trainer-0\"");
  // Accounting needs two GPU ticks.
  const std::string body = WaitForMetric(daemon, "vigil_gpu_allocated_seconds_total{");

  EXPECT_NE(body.find("k8s_namespace=\"ml\""), std::string::npos) << body << daemon.Log();
  EXPECT_NE(body.find("k8s_container=\"main\""), std::string::npos) << body;
  for (const char* family :
       {"vigil_gpu_process_memory_used_bytes{", "vigil_gpu_allocated_seconds_total{"}) {
    SCOPED_TRACE(family);
    const size_t at = body.find(family);
    ASSERT_NE(at, std::string::npos) << body;
    const std::string line = body.substr(at, body.find('\n', at) - at);
    EXPECT_NE(line.find("job_id=\"11111111-2222-3333-4444-555555555555\""), std::string::npos)
        << line;
    EXPECT_NE(line.find("k8s_pod=\"trainer-0\""), std::string::npos) << line;
  }
  EXPECT_GE((*server)->list_calls(), 1);
  EXPECT_TRUE(daemon.running()) << daemon.Log();  // gRPC under the allow-list.
}

TEST(VigildK8sTest, WithoutTheKubeletStatusSaysPodsAreNamedFromCgroupPaths) {
  VigildProcess daemon;
  ASSERT_TRUE(StartDaemon(daemon, daemon.dir() + "/absent.sock"));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  WaitForMetric(daemon, "k8s_pod=\"11111111-2222-3333-4444-555555555555\"");

  auto client = RpcClient::Connect(daemon.rpc_target(), 5 * kNanosPerSecond);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto reply = client->Call({{"fn", "vigilStatus"}}, 10 * kNanosPerSecond);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();

  bool found = false;
  for (const auto& line : (*reply)["reduced_features"]) {
    const std::string text = line.get<std::string>();
    found |= text.find("kubernetes attribution") != std::string::npos &&
             text.find("absent.sock") != std::string::npos;
  }
  EXPECT_TRUE(found) << reply->dump();
}

}  // namespace
}  // namespace vigil::testing
