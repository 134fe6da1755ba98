// SPDX-License-Identifier: Apache-2.0
// On-demand tracing end to end through the real vigild: a Kineto client written from the
// byte-level spec (tests/ipc/kineto_spec_client.h) registers with the daemon's IPC fabric and
// polls as Kineto does; `vigil trace --wait` asks the daemon for a trace of the job; the client
// receives the config, "writes" its trace where ACTIVITIES_LOG_FILE says, and the CLI reports the
// file as written. Also: a request that matches nothing says why.
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "ipc/trace_config.h"
#include "kineto_spec_client.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

constexpr int64_t kJobId = 4242;
constexpr int32_t kActivities = 2;  // Kineto's ACTIVITIES request bit.

TEST(VigildTraceTest, KinetoClientIsTracedOnDemandThroughTheDaemon) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.ok());
  const auto pids = testing_util::OwnAncestorPids();
  ASSERT_TRUE(kineto.RegisterContext(0, static_cast<int32_t>(getpid()), kJobId).has_value())
      << daemon.Log();
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, pids).has_value()) << daemon.Log();

  std::atomic<bool> stop{false};
  std::string written;
  std::thread poller([&] {
    while (!stop) {
      auto config = kineto.Poll(kActivities, kJobId, pids);
      const std::string key = "ACTIVITIES_LOG_FILE=";
      if (config && config->find(key) != std::string::npos) {
        const size_t at = config->find(key) + key.size();
        const std::string log = config->substr(at, config->find('\n', at) - at);
        written = KinetoTraceFileForPid(log, static_cast<int32_t>(getpid()));
        (void)WriteFileAtomic(written, R"({"traceEvents": []})");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::string out;
  const int status = RunVigilCli("trace --job-id " + std::to_string(kJobId) +
                                     " --duration-ms 100 --wait --wait-timeout 60s --json --host " +
                                     daemon.rpc_target(),
                                 &out);
  stop = true;
  poller.join();

  ASSERT_EQ(status, 0) << out << daemon.Log();
  auto results = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(results.is_array()) << out;
  ASSERT_EQ(results.size(), 1u) << out;
  ASSERT_EQ(results[0]["processes"].size(), 1u) << out;
  EXPECT_EQ(results[0]["processes"][0]["state"], "written") << out;
  EXPECT_EQ(results[0]["processes"][0]["pid"], getpid()) << out;
  EXPECT_FALSE(written.empty());
  EXPECT_EQ(written.rfind(daemon.dir() + "/traces/", 0), 0u) << written;  // Under --trace-root.
}

// One `vigil trace --wait` across 32 real daemons on loopback (own ports, own IPC names), each with
// one Kineto process: every host answers and every trace is written.
TEST(VigildTraceTest, FansOutToThirtyTwoDaemonsAndFollowsEveryTrace) {
  constexpr int kDaemons = 32;
  std::vector<std::unique_ptr<VigildProcess>> daemons;
  std::vector<std::unique_ptr<testing_util::KinetoSpecClient>> clients;
  std::string hosts;
  for (int i = 0; i < kDaemons; ++i) {
    daemons.push_back(std::make_unique<VigildProcess>());
    ASSERT_TRUE(daemons.back()->Spawn({"--interval", "60s"}));
  }
  const auto pids = testing_util::OwnAncestorPids();
  for (int i = 0; i < kDaemons; ++i) {
    // Another test running in parallel may take a port between its pick and vigild's bind:
    // start that daemon again on fresh ports.
    for (int retry = 0; retry < 3 && !daemons[i]->WaitHealthy(); ++retry) {
      daemons[i] = std::make_unique<VigildProcess>();
      ASSERT_TRUE(daemons[i]->Spawn({"--interval", "60s"}));
    }
    ASSERT_TRUE(daemons[i]->WaitHealthy()) << daemons[i]->Log();
    clients.push_back(std::make_unique<testing_util::KinetoSpecClient>(
        "vigil-kineto-fan-" + std::to_string(getpid()) + "-" + std::to_string(i),
        daemons[i]->ipc_name()));
    ASSERT_TRUE(clients.back()->ok());
    ASSERT_TRUE(clients.back()->Poll(kActivities, kJobId, pids).has_value());
    hosts += (hosts.empty() ? "" : ",") + daemons[i]->rpc_target();
  }
  std::atomic<bool> stop{false};
  std::thread poller([&] {
    while (!stop) {
      for (auto& client : clients) {
        auto config = client->Poll(kActivities, kJobId, pids);
        const std::string key = "ACTIVITIES_LOG_FILE=";
        if (config && config->find(key) != std::string::npos) {
          const size_t at = config->find(key) + key.size();
          const std::string log = config->substr(at, config->find('\n', at) - at);
          (void)WriteFileAtomic(KinetoTraceFileForPid(log, static_cast<int32_t>(getpid())), "{}");
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::string out;
  const int status = RunVigilCli("trace --job-id " + std::to_string(kJobId) +
                                     " --duration-ms 100 --wait --wait-timeout 120s --json" +
                                     " --parallel 16 --hosts " + hosts,
                                 &out);
  stop = true;
  poller.join();

  ASSERT_EQ(status, 0) << out;
  auto results = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(results.is_array()) << out;
  ASSERT_EQ(results.size(), static_cast<size_t>(kDaemons)) << out;
  for (const auto& host : results) {
    ASSERT_EQ(host["processes"].size(), 1u) << host.dump();
    EXPECT_EQ(host["processes"][0]["state"], "written") << host.dump();
  }
}

TEST(VigildTraceTest, NothingMatchedListsRegisteredProcesses) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-nm-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.ok());
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, testing_util::OwnAncestorPids()).has_value());
  std::string out;

  RunVigilCli("trace --job-id 999 --duration-ms 100 --host " + daemon.rpc_target(), &out);

  EXPECT_NE(out.find(std::to_string(kJobId)), std::string::npos) << out;  // What is registered.
}

// `vigil trace --with-cpu-profile`: the daemon samples the traced job's processes over the
// trace's window and the CLI writes the profile, which `vigil analyze --cpu-profile` reads.
TEST(VigildTraceTest, WithCpuProfileSamplesTheTracedJobOverTheTracesWindow) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the daemon samples another process's stacks";
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-cp-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.ok());
  const auto pids = testing_util::OwnAncestorPids();
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, pids).has_value()) << daemon.Log();
  std::atomic<bool> stop{false};
  std::thread poller([&] {  // Kineto's poll loop, and some CPU work to be sampled.
    while (!stop) {
      (void)kineto.Poll(kActivities, kJobId, pids);
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      volatile uint64_t x = 0;
      while (std::chrono::steady_clock::now() < until) x = x + 1;
    }
  });
  const std::string path = daemon.dir() + "/cpu.json";
  std::string out;
  const int64_t before_ms = UnixNanos() / kNanosPerMilli;
  const int status =
      RunVigilCli("trace --job-id " + std::to_string(kJobId) +
                      " --duration-ms 1000 --start-delay-ms 500 --with-cpu-profile " + path +
                      " --host " + daemon.rpc_target(),
                  &out);
  stop = true;
  poller.join();
  ASSERT_EQ(status, 0) << out << daemon.Log();
  EXPECT_NE(out.find("cpu profile: "), std::string::npos) << out;
  EXPECT_NE(out.find("written to " + path), std::string::npos) << out;
  auto text = ReadSmallFile(path, 64 << 20);
  ASSERT_TRUE(text.ok()) << text.status().ToString() << out;
  auto profile = nlohmann::json::parse(*text, nullptr, false);
  ASSERT_TRUE(profile.is_object()) << *text;
  EXPECT_GT(profile["total_samples"].get<uint64_t>(), 0u) << *text;
  EXPECT_NE(std::find(profile["pids"].begin(), profile["pids"].end(), getpid()),
            profile["pids"].end())
      << *text;
  // It covered the trace's window: it started at the trace's start, after the delay.
  EXPECT_GE(profile["start_unix_ns"].get<int64_t>() / kNanosPerMilli, before_ms + 400);
  EXPECT_GE(profile["duration_ns"].get<int64_t>(), 900 * kNanosPerMilli);
}

// `vigil status` lists the registered processes (docs/protocols.md); --json has them too.
TEST(VigildTraceTest, StatusListsTheRegisteredProcesses) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-st-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.ok());
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, testing_util::OwnAncestorPids()).has_value());

  std::string json;
  ASSERT_EQ(RunVigilCli("status --json --host " + daemon.rpc_target(), &json), 0) << json;
  auto status = nlohmann::json::parse(json, nullptr, false);
  ASSERT_TRUE(status.contains("registered_processes")) << json;
  bool found = false;
  for (const auto& p : status["registered_processes"]) {
    if (p["pid"] != getpid()) continue;
    found = true;
    EXPECT_EQ(p["job_id"], std::to_string(kJobId));
    EXPECT_EQ(p["source"], "kineto");
    EXPECT_EQ(p["uid"], static_cast<int>(getuid()));
    EXPECT_GE(p["last_poll_s"].get<double>(), 0.0);
  }
  EXPECT_TRUE(found) << json;

  std::string text;
  ASSERT_EQ(RunVigilCli("status --host " + daemon.rpc_target(), &text), 0) << text;
  EXPECT_NE(text.find("registered processes:"), std::string::npos) << text;
  EXPECT_NE(text.find("REGISTERED AS"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(getpid())), std::string::npos) << text;
}

// A trace vigild's own periodic policy takes goes to --fleet-url without any request, saying
// where it came from, so the fleet can make a request of it (docs/protocols.md "Trace upload").
TEST(VigildTraceTest, ATraceTheDaemonTakesOnItsOwnIsUploadedToTheFleet) {
  httplib::Server fleet;  // Stands in for vigil-fleet's trace route.
  std::mutex mu;
  std::vector<std::multimap<std::string, std::string>> uploads;
  fleet.Post("/api/v1/traces", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    uploads.push_back(req.params);
    res.status = 201;
    res.set_content("{}", "application/json");
  });
  const int port = fleet.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serve([&] { fleet.listen_after_bind(); });
  struct StopServer {
    httplib::Server* s;
    std::thread* t;
    ~StopServer() {
      s->stop();
      t->join();
    }
  } stop_server{&fleet, &serve};

  VigildProcess daemon;
  const std::string config = daemon.dir() + "/auto.toml";
  ASSERT_TRUE(WriteFileAtomic(config,
                              "[auto_trace]\nperiodic = true\nperiodic_every = \"2s\"\n"
                              "duration_ms = 100\n")
                  .ok());
  ASSERT_TRUE(
      daemon.Spawn({"--config", config, "--fleet-url", "http://127.0.0.1:" + std::to_string(port),
                    "--state-dir", daemon.dir() + "/state"}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-auto-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.ok());
  const auto pids = testing_util::OwnAncestorPids();
  ASSERT_TRUE(kineto.RegisterContext(0, static_cast<int32_t>(getpid()), kJobId).has_value());
  // Poll as Kineto does and write the trace when the daemon's own request arrives.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto polled = kineto.Poll(kActivities, kJobId, pids);
    const std::string key = "ACTIVITIES_LOG_FILE=";
    if (polled && polled->find(key) != std::string::npos) {
      const size_t at = polled->find(key) + key.size();
      const std::string log = polled->substr(at, polled->find('\n', at) - at);
      ASSERT_TRUE(WriteFileAtomic(KinetoTraceFileForPid(log, static_cast<int32_t>(getpid())),
                                  R"({"traceEvents": []})")
                      .ok());
    }
    {
      std::lock_guard lock(mu);
      if (!uploads.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard lock(mu);
  ASSERT_FALSE(uploads.empty()) << daemon.Log();
  auto param = [&](const std::string& k) {
    auto it = uploads[0].find(k);
    return it == uploads[0].end() ? std::string("<none>") : it->second;
  };
  EXPECT_EQ(param("request_id"), "<none>");
  EXPECT_EQ(param("origin"), "auto:periodic");
  EXPECT_EQ(param("expected"), "1");
  EXPECT_EQ(param("job_id"), std::to_string(kJobId));
  EXPECT_EQ(param("pid"), std::to_string(getpid()));
  EXPECT_NE(param("trace_id"), "<none>");
  EXPECT_NE(param("reason").find("periodic"), std::string::npos) << param("reason");
}

// Runs rpc_peer as uid 65534 (arguments single-quoted for the shell); its replies, one per line.
std::vector<nlohmann::json> RunAsNobody(const std::vector<std::string>& args) {
  std::string cmd = std::string(VIGIL_RPC_PEER) + " 65534";
  for (const std::string& a : args) {
    cmd += " '" + a + "'";
  }
  std::vector<nlohmann::json> out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) {
    return out;
  }
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0;) {
    text.append(buf, n);
  }
  pclose(f);
  std::string_view rest = text;
  std::string_view line;
  while (NextLine(&rest, &line)) {
    out.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return out;
}

// Finding: over loopback TCP any local user could trace or cancel another user's job, pause GPU
// profiling for everyone and list every session. Now a tokenless TCP caller is identified by
// the uid owning its socket and acts only on its own processes, as `dyno gputrace` by the job's
// own user still does; root keeps full control.
TEST(VigildTraceTest, UnprivilegedTcpPeerControlsOnlyItsOwnProcesses) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to act as uid 65534";
  }
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient victim("vigil-kineto-victim-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(victim.ok());
  ASSERT_TRUE(victim.RegisterContext(0, static_cast<int32_t>(getpid()), kJobId).has_value());
  ASSERT_TRUE(victim.Poll(kActivities, kJobId, testing_util::OwnAncestorPids()).has_value());
  // Root holds a trace of the victim, due in a minute.
  auto root = RpcClient::Connect(daemon.rpc_target(), 5 * kNanosPerSecond);
  ASSERT_TRUE(root.ok());
  auto held = root->Call({{"fn", "vigilTraceStart"},
                          {"job_id", std::to_string(kJobId)},
                          {"start_delay_ms", 60000},
                          {"duration_ms", 100}},
                         5 * kNanosPerSecond);
  ASSERT_TRUE(held.ok());
  ASSERT_EQ((*held)["triggered"], 1) << held->dump();
  const std::string id = (*held)["trace_id"];
  const std::string dyno_victim =
      R"({"fn":"setKinetOnDemandRequest","config":"ACTIVITIES_DURATION_MSECS=100","job_id":)" +
      std::to_string(kJobId) + R"(,"pids":[0],"process_limit":3})";

  std::vector<nlohmann::json> replies =
      RunAsNobody({daemon.rpc_target(), "--kineto", daemon.ipc_name(), "777", dyno_victim,
                   R"({"fn":"vigilTraceCancel","trace_id":")" + id + R"("})",
                   R"({"fn":"dcgmProfPause","duration_s":60})", R"({"fn":"vigilTraceList"})",
                   R"({"fn":"setKinetOnDemandRequest","config":"ACTIVITIES_DURATION_MSECS=100",)"
                   R"("job_id":777,"pids":[0],"process_limit":3})"});

  ASSERT_EQ(replies.size(), 6u) << daemon.Log();
  EXPECT_EQ(replies[0]["processesMatched"], nlohmann::json::array()) << replies[0].dump();
  for (int i : {1, 2}) {
    EXPECT_NE(replies[i].value("error", "").find("permission denied"), std::string::npos)
        << replies[i].dump();
  }
  for (const auto& s : replies[3]["sessions"]) {
    EXPECT_NE(s["trace_id"], id) << "another user's session was listed";
  }
  for (const auto& p : replies[3]["processes"]) {
    EXPECT_NE(p["pid"], getpid()) << "another user's process was listed";
  }
  EXPECT_EQ(replies[4]["activityProfilersTriggered"].size(), 1u) << replies[4].dump();
  EXPECT_EQ(replies[5]["config_received"], true) << daemon.Log();

  // Root's trace is untouched, and root traces over TCP without a token as `dyno` does.
  auto status = root->Call({{"fn", "vigilTraceStatus"}, {"trace_id", id}}, 5 * kNanosPerSecond);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["cancelled"], false) << status->dump();
  auto dyno = root->Call(nlohmann::json::parse(dyno_victim), 5 * kNanosPerSecond);
  ASSERT_TRUE(dyno.ok());
  EXPECT_EQ((*dyno)["processesMatched"], nlohmann::json::array({getpid()})) << dyno->dump();
}

}  // namespace
}  // namespace vigil::testing
