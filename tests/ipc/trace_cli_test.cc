// SPDX-License-Identifier: Apache-2.0
// `vigil trace` fanning out to several in-process daemons on loopback: vigild-style ones (trace
// ids, states) and a plain Dynolog-style one (only setKinetOnDemandRequest).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "cli/cli_context.h"
#include "ipc/ipc_test_util.h"
#include "ipc/trace_config.h"
#include "ipc/trace_rpc.h"
#include "rpc/rpc_server.h"

namespace vigil {

void AddTraceCommand(CLI::App& app, CliContext& ctx);

namespace {

struct FakeDaemon {
  FakeDaemon(const std::string& root, bool dynolog_only, int64_t job, int process_pid) {
    ProcessRegistryOptions ro;
    ro.match_only_live = false;  // The registered pids are made up.
    ro.verify_credentials = false;
    registry = std::make_unique<ProcessRegistry>(ro, clock.Fn());
    TraceServiceOptions to;
    to.trace_root = root;
    service = std::make_unique<TraceService>(to, registry.get());
    if (dynolog_only) {
      dispatcher.Register("setKinetOnDemandRequest",
                          [this](const nlohmann::json& r, const CallerInfo& c) {
                            return HandleSetKinetOnDemandRequest(service.get(), r, c);
                          });
    } else {
      RegisterTraceMethods(&dispatcher, service.get());
    }
    RpcServerOptions so;
    so.tcp_listen = "127.0.0.1:0";
    server = std::make_unique<RpcServer>(so, &dispatcher);
    EXPECT_TRUE(server->Start().ok());
    if (process_pid > 0) {
      EXPECT_TRUE(
          registry->Poll({process_pid, 0, 0}, KinetoRequest{2, job, {process_pid}}, IpcAddress{})
              .ok());
    }
  }
  std::string address() const { return fmt::format("127.0.0.1:{}", server->tcp_port()); }

  testing_util::FakeClock clock;
  std::unique_ptr<ProcessRegistry> registry;
  std::unique_ptr<TraceService> service;
  RpcDispatcher dispatcher;
  std::unique_ptr<RpcServer> server;
};

int RunVigil(std::vector<std::string> args, std::string* out) {
  CliContext ctx;
  CLI::App app{"vigil"};
  app.require_subcommand(1);
  app.fallthrough();
  AddGlobalOptions(app, ctx);
  AddTraceCommand(app, ctx);
  std::vector<const char*> argv = {"vigil"};
  for (const std::string& a : args) {
    argv.push_back(a.c_str());
  }
  ::testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    *out = ::testing::internal::GetCapturedStdout();
    return kExitUsage;
  }
  *out = ::testing::internal::GetCapturedStdout();
  return ctx.exit_code;
}

TEST(TraceCliTest, FansOutToVigildAndDynologDaemonsWithOneStartTime) {
  testing_util::TempDir root;
  std::vector<std::unique_ptr<FakeDaemon>> daemons;
  for (int i = 0; i < 4; ++i) {
    daemons.push_back(std::make_unique<FakeDaemon>(root.path() + "/" + std::to_string(i),
                                                   /*dynolog_only=*/i == 3, 77, 1000 + i));
  }
  std::string hosts;
  for (const auto& d : daemons) {
    hosts += (hosts.empty() ? "" : ",") + d->address();
  }
  std::string out;
  const int rc = RunVigil({"trace", "--job-id", "77", "--hosts", hosts, "--duration-ms", "200",
                           "--log-file", "/tmp/x.json", "--json", "--timeout", "5s"},
                          &out);
  EXPECT_EQ(rc, kExitOk) << out;
  auto results = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(results.is_array()) << out;
  ASSERT_EQ(results.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(results[i]["daemon"], "vigild");
    EXPECT_EQ(results[i]["matched"], 1);
    EXPECT_EQ(results[i]["processes"][0]["pid"], 1000 + i);
    EXPECT_EQ(results[i]["processes"][0]["state"], "queued");
    EXPECT_FALSE(results[i]["trace_id"].get<std::string>().empty());
  }
  EXPECT_EQ(results[3]["daemon"], "dynolog");
  EXPECT_EQ(results[3]["processes"][0]["pid"], 1003);
  // Its daemon moved /tmp/x.json into its trace root, and said where (vigilRewrittenLogFiles).
  const std::string dyno_id = daemons[3]->service->List().at(0).trace_id;
  EXPECT_EQ(results[3]["processes"][0]["path"], root.path() + "/3/" + dyno_id + "/x_1003.json");
  // Every host got the same PROFILE_START_TIME, in the future.
  std::set<std::string> starts;
  for (const auto& d : daemons) {
    for (const TraceSession& s : d->service->List()) {
      const size_t at = s.config.find("PROFILE_START_TIME=");
      ASSERT_NE(at, std::string::npos);
      starts.insert(s.config.substr(at, s.config.find('\n', at) - at));
    }
  }
  EXPECT_EQ(starts.size(), 1u);
}

TEST(TraceCliTest, FansOutToThirtyTwoDaemonsAndWaitsForEveryFile) {
  testing_util::TempDir root;
  std::vector<std::unique_ptr<FakeDaemon>> daemons;
  std::string hosts;
  for (int i = 0; i < 32; ++i) {
    daemons.push_back(
        std::make_unique<FakeDaemon>(root.path() + "/d" + std::to_string(i), false, 88, 5000 + i));
    hosts += (hosts.empty() ? "" : ",") + daemons.back()->address();
  }
  // Each daemon's process takes its config and "writes" its trace, as Kineto would, while the
  // CLI waits.
  std::atomic<bool> stop{false};
  std::thread kineto([&] {
    while (!stop) {
      for (int i = 0; i < 32; ++i) {
        FakeDaemon& d = *daemons[i];
        const int pid = 5000 + i;
        auto config = d.registry->Poll({pid, 0, 0}, KinetoRequest{2, 88, {pid}}, IpcAddress{});
        const std::string key = "ACTIVITIES_LOG_FILE=";
        if (config.ok() && config->find(key) != std::string::npos) {
          const size_t at = config->find(key) + key.size();
          const std::string log = config->substr(at, config->find('\n', at) - at);
          (void)WriteFileAtomic(KinetoTraceFileForPid(log, pid), std::string(100 + i, 'x'));
        }
        d.clock.Advance(1000000000);  // Each Tick sees time pass: the size becomes stable.
        d.service->Tick();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::string out;
  const int rc = RunVigil({"trace", "--job-id", "88", "--hosts", hosts, "--parallel", "8", "--wait",
                           "--wait-timeout", "60s", "--json"},
                          &out);
  stop = true;
  kineto.join();
  EXPECT_EQ(rc, kExitOk) << out;
  auto results = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(results.is_array()) << out;
  ASSERT_EQ(results.size(), 32u);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(results[i]["processes"][0]["state"], "written") << results[i].dump();
    EXPECT_EQ(results[i]["processes"][0]["size_bytes"], 100 + i);
  }
}

TEST(TraceCliTest, ReportsWhyNothingMatchedAndUnreachableHosts) {
  testing_util::TempDir root;
  FakeDaemon d(root.path(), false, 5, 2000);
  std::string out;
  const int rc = RunVigil({"trace", "--job-id", "77", "--hosts", d.address() + ",127.0.0.1:1",
                           "--timeout", "2s", "--fail-on-no-process"},
                          &out);
  EXPECT_EQ(rc, kExitFailure);
  EXPECT_NE(out.find("none has job id 77"), std::string::npos) << out;
  EXPECT_NE(out.find("2000 (job 5)"), std::string::npos) << out;
  EXPECT_NE(out.find("unreachable"), std::string::npos) << out;
}

TEST(TraceCliTest, WaitIsBoundedByWaitTimeoutAndReportsUnfinishedProcesses) {
  testing_util::TempDir root;
  FakeDaemon d(root.path(), false, 9, 3000);  // Its process never polls: stays queued.
  std::string out;
  const int rc = RunVigil(
      {"trace", "--job-id", "9", "--host", d.address(), "--wait", "--wait-timeout", "1s", "--json"},
      &out);
  auto results = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(results.is_array()) << out;
  EXPECT_EQ(results[0]["processes"][0]["state"], "queued");
  EXPECT_EQ(rc, kExitFailure);  // Not written within the wait.
}

TEST(TraceCliTest, RejectsBadHostListsAndPids) {
  std::string out;
  EXPECT_EQ(RunVigil({"trace", "--hosts", "node[3-1]"}, &out), kExitUsage);
  EXPECT_EQ(RunVigil({"trace", "--pids", "12,x"}, &out), kExitUsage);
}

}  // namespace
}  // namespace vigil
