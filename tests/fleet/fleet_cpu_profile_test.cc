// SPDX-License-Identifier: Apache-2.0
// Continuous CPU profiles from vigild to vigil-fleet, both real processes: the fake
// libnvidia-ml.so.1 lists a busy test workload (main -> Outer -> Middle -> HotLeaf, frame
// pointers) as a GPU process of a job, vigild samples it in 1 s windows and pushes its GPU
// counters (so the ledger knows the job runs on this host), and uploads each window with its
// host token. The fleet's list, merged folded profile and flame graph must show the workload's
// stacks, and its counts must equal what the daemon says it sent. A second daemon with a wrong
// token keeps sampling and says in its status, and in `vigil status`, that uploads fail.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "fleet_process.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"
#include "workload.h"

namespace vigil {
namespace {

using nlohmann::json;
using testing::VigildProcess;

// The job the daemon files `pid` under (vigilProcesses), "" until it watches the process.
std::string JobOf(VigildProcess& daemon, int pid) {
  auto client = RpcClient::Connect(daemon.rpc_target(), 5 * kNanosPerSecond);
  if (!client.ok()) return "";
  auto reply = client->Call({{"fn", "vigilProcesses"}}, 5 * kNanosPerSecond);
  if (!reply.ok()) return "";
  for (const auto& p : (*reply)["processes"]) {
    if (p.value("pid", 0) == pid) return p.value("job_id", "");
  }
  return "";
}

json UploadStatus(VigildProcess& daemon) {
  const json status = json::parse(daemon.Get("/api/v1/status").body, nullptr, false);
  if (!status.is_object() || !status.contains("continuous_profile")) return json::object();
  return status["continuous_profile"].value("upload", json::object());
}

template <typename Fn>
bool Eventually(Fn fn, int seconds = 90) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

TEST(FleetCpuProfileTest, DaemonUploadsJobWindowsAndTheFleetServesThem) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on another process";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vigil-fleet-cpuprof-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string host = "cpuprof-node-" + std::to_string(getpid());
  const std::string tokens = (dir / "tokens").string();
  ASSERT_TRUE(WriteFileAtomic(tokens, host + " tok-good\n@operator tok-op\n").ok());
  chmod(tokens.c_str(), 0600);
  fleet_test::FleetProcess fleet((dir / "fleet.db").string(), fleet_test::FreePort(),
                                 {"--token-file", tokens});
  ASSERT_TRUE(fleet.Start());

  VigildProcess daemon;
  const std::string job = "cpuprof-" + std::to_string(daemon.http_port());
  testing::WorkloadOptions busy_options;
  busy_options.env = {"VIGIL_JOB_ID=" + job};
  testing::Workload busy({std::string(VIGIL_PROFILE_WORKLOADS) + "/hot_native_fp", "600"},
                         busy_options);
  ASSERT_TRUE(busy.WaitReady()) << busy.output();
  const std::string script = daemon.dir() + "/nvml.script";
  ASSERT_TRUE(WriteFileAtomic(script, "gpus 1\ngpu 0 name NVIDIA H100 80GB HBM3\ngpu 0 procs " +
                                          std::to_string(busy.pid()) + ":1000000\n")
                  .ok());
  setenv("FAKE_NVML_SCRIPT", script.c_str(), 1);
  const std::string config = daemon.dir() + "/vigild.toml";
  ASSERT_TRUE(
      WriteFileAtomic(config, "env_allow_list = [\"VIGIL_JOB_ID\"]\nhost_name = \"" + host + "\"\n")
          .ok());
  const std::string good_token = daemon.dir() + "/fleet-token";
  ASSERT_TRUE(WriteFileAtomic(good_token, "tok-good\n").ok());
  const std::vector<std::string> common = {"--config",
                                           config,
                                           "--interval",
                                           "1s",
                                           "--gpu-backend",
                                           "nvml",
                                           "--nvml-library",
                                           std::string(VIGIL_FAKE_NVML_DIR) + "/libnvidia-ml.so.1",
                                           "--profile.continuous",
                                           "--profile.window",
                                           "1s",
                                           "--fleet-url",
                                           fleet.url()};
  std::vector<std::string> args = common;
  args.insert(args.end(), {"--fleet-token-file", good_token, "--state-dir", daemon.dir() + "/st"});
  ASSERT_TRUE(daemon.Spawn(args));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  std::string expected;
  ASSERT_TRUE(Eventually([&] { return !(expected = JobOf(daemon, busy.pid())).empty(); }))
      << "the GPU collector never watched the busy process\n"
      << daemon.Log();

  httplib::Client http(fleet.url());
  const httplib::Headers auth = {{"Authorization", "Bearer tok-op"}};
  const std::string list_path = "/api/v1/cpu-profiles?job_id=" + expected + "&limit=1000";
  // Two windows stored (the first may come before the ledger knew the job: refused, counted).
  ASSERT_TRUE(Eventually([&] {
    auto r = http.Get(list_path, auth);
    return r && r->status == 200 && json::parse(r->body)["profiles"].size() >= 2;
  })) << daemon.Log()
      << UploadStatus(daemon).dump();

  // The fleet holds exactly what the daemon says it delivered: read at a moment when the
  // daemon's counts do not change across the fleet's reply.
  json listed, before;
  ASSERT_TRUE(Eventually([&] {
    before = UploadStatus(daemon);
    auto r = http.Get(list_path, auth);
    const json after = UploadStatus(daemon);
    if (!r || r->status != 200 || before["uploaded"] != after["uploaded"] ||
        before["queued"] != 0) {
      return false;
    }
    listed = json::parse(r->body)["profiles"];
    uint64_t samples = 0;
    for (const json& p : listed) samples += p["samples"].get<uint64_t>();
    return listed.size() == before["uploaded"].get<size_t>() &&
           samples == before["samples_sent"].get<uint64_t>();
  })) << "daemon: "
      << before.dump() << "\nfleet: " << listed.dump();
  EXPECT_EQ(before["state"], "ok") << before.dump();
  for (const json& p : listed) {
    EXPECT_EQ(p["host"], host);
    EXPECT_GT(p["end_ns"].get<int64_t>(), p["start_ns"].get<int64_t>());
    EXPECT_GE(p["frequency_hz"].get<int>(), 1);
  }

  // Merged over the job's windows: the workload's chain, rooted at its process name.
  auto folded = http.Get("/api/v1/jobs/" + expected + "/cpu-profile?format=folded", auth);
  ASSERT_TRUE(folded);
  ASSERT_EQ(folded->status, 200) << folded->body;
  EXPECT_NE(folded->body.find("hot_native_fp;"), std::string::npos) << folded->body;
  EXPECT_NE(folded->body.find("main;vigil_test::Outer(double);vigil_test::Middle(unsigned long);"
                              "vigil_test::HotLeaf(unsigned long)"),
            std::string::npos)
      << folded->body;
  auto summary = http.Get("/api/v1/jobs/" + expected + "/cpu-profile", auth);
  ASSERT_EQ(summary->status, 200) << summary->body;
  const json s = json::parse(summary->body);
  ASSERT_EQ(s["hosts"].size(), 1u);
  EXPECT_EQ(s["hosts"][0]["host"], host);
  ASSERT_FALSE(s["top"].empty());
  EXPECT_EQ(s["top"][0]["function"], "vigil_test::HotLeaf(unsigned long)") << s["top"].dump();
  auto html = http.Get("/api/v1/jobs/" + expected + "/cpu-profile?format=html", auth);
  ASSERT_EQ(html->status, 200);
  EXPECT_NE(html->body.find("vigil_test::HotLeaf"), std::string::npos);

  // A daemon whose token the fleet does not know: sampling goes on, uploads fail and say why.
  VigildProcess bad;
  const std::string bad_token = bad.dir() + "/fleet-token";
  ASSERT_TRUE(WriteFileAtomic(bad_token, "tok-wrong\n").ok());
  std::vector<std::string> bad_args = common;
  bad_args.insert(bad_args.end(),
                  {"--fleet-token-file", bad_token, "--state-dir", bad.dir() + "/st"});
  ASSERT_TRUE(bad.Spawn(bad_args));
  ASSERT_TRUE(bad.WaitHealthy()) << bad.Log();
  json failing;
  ASSERT_TRUE(Eventually([&] {
    failing = UploadStatus(bad);
    return failing.value("failed", 0) >= 1;
  })) << failing.dump()
      << bad.Log();
  EXPECT_EQ(failing["uploaded"], 0);
  EXPECT_NE(failing.value("last_error", "").find("HTTP 403 {\"error\":\"bad token\"}"),
            std::string::npos)
      << failing.dump();
  const json status = json::parse(bad.Get("/api/v1/status").body);
  EXPECT_EQ(status["continuous_profile"]["state"], "sampling") << status.dump();
#ifdef VIGIL_TEST_HAVE_CLI
  std::string text;
  ASSERT_EQ(testing::RunVigilCli("status --host " + bad.rpc_target(), &text), 0) << text;
  EXPECT_NE(text.find("  uploads to vigil-fleet: failing, 0 uploaded, "), std::string::npos)
      << text;
  EXPECT_NE(text.find("last error: "), std::string::npos) << text;
#endif
  bad.Signal(SIGTERM);
  EXPECT_EQ(bad.Wait(), 0) << bad.Log();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0) << daemon.Log();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
