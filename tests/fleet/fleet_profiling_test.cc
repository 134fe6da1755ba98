// SPDX-License-Identifier: Apache-2.0
// Fleet profiling end to end with real processes: vigil-fleet (--profiling=manual, host tokens,
// a daemon token file), two vigild (simulated GPUs, distinct host names, pushing to the fleet
// with their own tokens, remote control behind a token) and on each host one Kineto-like rank
// process (kineto_trace_client) of the simulated job "sim-train-1001", its job id resolved by
// the daemon from its environment. `vigil fleet profile --wait` asks the service; the service
// finds both hosts in the ledger, starts a trace on each daemon, the ranks write their traces,
// the daemons upload them, and the service analyses both and stores the analysis.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/wait_for.h"
#include "fleet_process.h"
#include "vigild_process.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr char kJob[] = "sim-train-1001";  // GPUs 0-3 of every simulated host.

// One rank: the client process with VIGIL_JOB_ID in its environment.
class Rank {
 public:
  Rank(const std::string& ipc_name, const std::string& fixture, const std::string& ready)
      : ready_(ready) {
    pid_ = fork();
    if (pid_ == 0) {
      std::string bin = std::string(VIGIL_BIN_DIR) + "/kineto_trace_client";
      std::string trace = std::string(VIGIL_TEST_DATA_DIR) + "/traces/" + fixture;
      std::string ipc = ipc_name, ready_path = ready;
      char* argv[] = {bin.data(), ipc.data(), trace.data(), ready_path.data(), nullptr};
      std::string env_job = std::string("VIGIL_JOB_ID=") + kJob;
      char* envp[] = {env_job.data(), nullptr};
      execve(argv[0], argv, envp);
      _exit(127);
    }
  }
  ~Rank() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool WaitReady() {
    return WaitFor([&] { return PathExists(ready_); }, 30, std::chrono::milliseconds(200));
  }

 private:
  std::string ready_;
  pid_t pid_ = -1;
};

json Api(const std::string& url, const std::string& method, const std::string& path,
         const std::string& token, int* status, const std::string& body = "") {
  httplib::Client client(url);
  client.set_read_timeout(std::chrono::seconds(10));
  httplib::Headers headers = {{"Authorization", "Bearer " + token}};
  auto res = method == "POST" ? client.Post(path, headers, body, "application/json")
                              : client.Get(path, headers);
  *status = res ? res->status : 0;
  return res ? json::parse(res->body, nullptr, false) : json();
}

TEST(FleetProfilingTest, ProfilesAJobOnBothOfItsHostsAndStoresTheAnalysis) {
  char tmpl[] = "/tmp/vigil-fprof-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  struct RemoveDir {
    std::string path;
    ~RemoveDir() { std::filesystem::remove_all(path); }
  } remove_dir{dir};  // Declared first: removed after every process below has stopped.
  ASSERT_TRUE(
      WriteFileAtomic(dir + "/fleet-tokens", "prof-a tok-a\nprof-b tok-b\n@operator tok-admin\n")
          .ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/tok-a", "tok-a\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/tok-b", "tok-b\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/admin", "tok-admin\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/daemon-token", "d-secret\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/daemon-tokens", "* d-secret\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/vigild.toml", "env_allow_list = [\"VIGIL_JOB_ID\"]\n").ok());

  fleet_test::FleetProcess fleet(
      dir + "/var/fleet.db", fleet_test::FreePort(),
      {"--token-file", dir + "/fleet-tokens", "--profiling", "manual", "--daemon-token-file",
       dir + "/daemon-tokens", "--profiling-collect-deadline", "3m", "--profiling-duration-ms",
       "300"});
  ASSERT_TRUE(fleet.Start());

  std::vector<std::unique_ptr<testing::VigildProcess>> daemons;
  const std::vector<std::string> names = {"prof-a", "prof-b"};
  for (const std::string& name : names) {
    auto spawn = [&] {
      auto d = std::make_unique<testing::VigildProcess>();
      EXPECT_TRUE(
          d->Spawn({"--config", dir + "/vigild.toml", "--gpu-backend", "sim", "--interval", "1s",
                    "--fleet-url", fleet.url(), "--fleet-token-file",
                    dir + "/" + (name == "prof-a" ? "tok-a" : "tok-b"), "--host-name", name,
                    "--state-dir", d->dir() + "/state", "--token-file", dir + "/daemon-token"}));
      return d;
    };
    daemons.push_back(spawn());
    // Another test may take a port between its pick and vigild's bind: start again.
    for (int retry = 0; retry < 3 && !daemons.back()->WaitHealthy(); ++retry) {
      daemons.back() = spawn();
    }
    ASSERT_TRUE(daemons.back()->WaitHealthy()) << daemons.back()->Log();
  }
  Rank rank0(daemons[0]->ipc_name(), "nccl_sampled_rank-0.json.gz", dir + "/ready-0");
  Rank rank1(daemons[1]->ipc_name(), "old_format_inference_rank_1.json.gz", dir + "/ready-1");
  ASSERT_TRUE(rank0.WaitReady()) << daemons[0]->Log();
  ASSERT_TRUE(rank1.WaitReady()) << daemons[1]->Log();

  // The ledger knows both hosts, where their daemons listen, and the job's GPUs on each.
  int status = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        json hosts = Api(fleet.url(), "GET", "/api/v1/hosts", "tok-admin", &status);
        json job =
            Api(fleet.url(), "GET", std::string("/api/v1/jobs/") + kJob, "tok-admin", &status);
        if (!hosts.is_object() || !job.is_object() || !job.contains("gpus")) return false;
        int with_rpc = 0;
        for (const json& h : hosts["hosts"]) with_rpc += h.value("rpc_address", "").empty() ? 0 : 1;
        std::set<std::string> job_hosts;
        for (const json& g : job["gpus"]) job_hosts.insert(g.value("host", ""));
        return with_rpc == 2 && job_hosts.size() == 2;
      },
      90, std::chrono::milliseconds(200)))
      << daemons[0]->Log();
  json hosts = Api(fleet.url(), "GET", "/api/v1/hosts", "tok-admin", &status);
  for (const json& h : hosts["hosts"]) {
    const auto& d = h["host"] == "prof-a" ? daemons[0] : daemons[1];
    EXPECT_EQ(h["rpc_address"], d->rpc_target()) << h.dump();
  }

  std::string out;
  const int code = testing::RunVigilCli(std::string("fleet profile --job-id ") + kJob +
                                            " --reason 'slow steps' --wait" +
                                            " --wait-timeout 4m --json --fleet " + fleet.url() +
                                            " --fleet-token-file " + dir + "/admin",
                                        &out);
  ASSERT_EQ(code, 0) << out << "\n--- prof-a\n"
                     << daemons[0]->Log() << "\n--- prof-b\n"
                     << daemons[1]->Log();
  const json request = json::parse(out, nullptr, false);
  ASSERT_TRUE(request.is_object()) << out;
  EXPECT_EQ(request["state"], "analysed") << out;
  EXPECT_EQ(request["job_id"], kJob);
  EXPECT_EQ(request["reason"], "manual: slow steps");
  EXPECT_EQ(request["trigger"], "manual");
  ASSERT_EQ(request["hosts"].size(), 2u) << out;
  for (const json& h : request["hosts"]) {
    EXPECT_EQ(h["state"], "tracing") << h.dump();
    EXPECT_EQ(h["expected_files"], 1) << h.dump();
  }
  ASSERT_EQ(request["files"].size(), 2u) << out;
  std::set<std::pair<std::string, int>> files;
  for (const json& f : request["files"]) {
    files.emplace(f["host"].get<std::string>(), f["rank"].get<int>());
    EXPECT_TRUE(PathExists(f["path"].get<std::string>())) << f.dump();
  }
  EXPECT_EQ(files, (std::set<std::pair<std::string, int>>{{"prof-a", 0}, {"prof-b", 1}}));
  ASSERT_TRUE(request["analysis_id"].is_number_integer()) << out;

  // The stored analysis: the report of both ranks, from profiling, with the request's reason.
  const json analysis = Api(fleet.url(), "GET",
                            "/api/v1/analyses/" + std::to_string(request["analysis_id"].get<int>()),
                            "tok-admin", &status);
  ASSERT_EQ(status, 200) << analysis.dump();
  EXPECT_EQ(analysis["job_id"], kJob) << analysis.dump().substr(0, 2000);
  EXPECT_EQ(analysis["source"], "profiling");
  EXPECT_EQ(analysis["reason"], "manual: slow steps");

  // History: the list shows it; each daemon reports its upload.
  const json list = Api(fleet.url(), "GET", "/api/v1/profiling", "tok-admin", &status);
  ASSERT_EQ(status, 200);
  ASSERT_EQ(list["requests"].size(), 1u);
  EXPECT_EQ(list["requests"][0]["request_id"], request["request_id"]);
  for (const auto& d : daemons) {
    const json s = json::parse(d->Get("/api/v1/status").body, nullptr, false);
    EXPECT_EQ(s["trace_uploads"]["uploaded"], 1) << s["trace_uploads"].dump();
  }

  // An upload with another host's token, or for an unknown request, is refused.
  Api(fleet.url(), "POST", "/api/v1/traces?request_id=x&host=prof-a&pid=1", "tok-b", &status,
      "\x1f\x8b");
  EXPECT_EQ(status, 403);
  Api(fleet.url(), "POST", "/api/v1/traces?request_id=nope&host=prof-a&pid=1", "tok-a", &status,
      "\x1f\x8b");
  EXPECT_EQ(status, 404);
}

}  // namespace
}  // namespace vigil
