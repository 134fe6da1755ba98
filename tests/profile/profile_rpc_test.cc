// SPDX-License-Identifier: Apache-2.0
// vigilProfile end to end: an RpcServer in this process carries the daemon's registration of
// the method (src/daemon/profile_methods.cc, compiled in), and the built `vigil profile --host`
// and `--hosts` sample a workload through it; plus the method's refusals, dispatched directly.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "daemon/profile_methods.h"
#include "profile/profile_request.h"
#include "rpc/dispatcher.h"
#include "rpc/rpc_server.h"
#include "workload.h"

namespace vigil {
namespace {

const std::string kVigil = std::string(VIGIL_BIN_DIR) + "/vigil";
const std::string kChainTail =
    ";main;vigil_test::Outer(double);vigil_test::Middle(unsigned long);"
    "vigil_test::HotLeaf(unsigned long)";

struct ShellRun {
  int rc = -1;
  std::string out;
};

ShellRun Shell(const std::string& command) {
  ShellRun run;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    return run;
  }
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) {
    run.out.append(buf.data(), n);
  }
  const int status = pclose(p);
  run.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Folded lines of `path` as (stack, count).
std::vector<std::pair<std::string, uint64_t>> Folded(const std::string& path) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.rfind(' ');
    out.emplace_back(line.substr(0, space), std::stoull(line.substr(space + 1)));
  }
  return out;
}

class ProfileRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root: perf_event_open on another process";
    }
    char tmpl[] = "/tmp/vigil-profile-rpc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    daemon::RegisterProfileMethods(&dispatcher_);
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }
  std::unique_ptr<RpcServer> StartServer() {
    RpcServerOptions o;
    o.tcp_listen = "127.0.0.1:0";
    auto server = std::make_unique<RpcServer>(o, &dispatcher_);
    EXPECT_TRUE(server->Start().ok());
    return server;
  }
  RpcDispatcher dispatcher_;
  std::string dir_;
};

TEST_F(ProfileRpcTest, HostSamplesThroughTheDaemonMethod) {
  std::unique_ptr<RpcServer> server = StartServer();
  testing::Workload work({std::string(VIGIL_PROFILE_WORKLOADS) + "/hot_native_fp"});
  ASSERT_TRUE(work.WaitReady());
  const std::string host = "127.0.0.1:" + std::to_string(server->tcp_port());

  ShellRun run = Shell(kVigil + " --host " + host + " profile --pid " + std::to_string(work.pid()) +
                       " --duration 1s --frequency 199 --unwind fp" + " --folded " + dir_ +
                       "/p.folded --top 3");

  ASSERT_EQ(run.rc, 0) << run.out;
  EXPECT_NE(run.out.find("vigil_test::HotLeaf(unsigned long)"), std::string::npos) << run.out;
  uint64_t total = 0, chain = 0;
  for (const auto& [stack, count] : Folded(dir_ + "/p.folded")) {
    total += count;
    // Every stack is rooted at the host, then the process.
    EXPECT_EQ(stack.rfind(host + ";hot_native_fp;", 0), 0u) << stack;
    chain += stack.ends_with(kChainTail) ? count : 0;
  }
  EXPECT_GT(total, 20u);
  EXPECT_GE(chain, total * 95 / 100);
}

TEST_F(ProfileRpcTest, HostsAreSampledInParallelAndMergedUnderTheirNames) {
  std::unique_ptr<RpcServer> a = StartServer();
  std::unique_ptr<RpcServer> b = StartServer();
  testing::Workload work({std::string(VIGIL_PROFILE_WORKLOADS) + "/hot_native_fp"});
  ASSERT_TRUE(work.WaitReady());
  const std::string host_a = "127.0.0.1:" + std::to_string(a->tcp_port());
  const std::string host_b = "127.0.0.1:" + std::to_string(b->tcp_port());
  const auto start = std::chrono::steady_clock::now();

  ShellRun run = Shell(kVigil + " profile --hosts " + host_a + "," + host_b + " --pid " +
                       std::to_string(work.pid()) + " --duration 3s --unwind fp --folded " + dir_ +
                       "/p.folded");

  ASSERT_EQ(run.rc, 0) << run.out;
  // Two 3 s runs in parallel, not one after the other (which would take over 6 s).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(5900));
  std::map<std::string, uint64_t> by_host;
  for (const auto& [stack, count] : Folded(dir_ + "/p.folded")) {
    by_host[stack.substr(0, stack.find(';'))] += count;
  }
  ASSERT_EQ(by_host.size(), 2u);
  EXPECT_GT(by_host[host_a], 10u);
  EXPECT_GT(by_host[host_b], 10u);
}

// --job-id: the daemon resolves the job to its processes (here: a job table the test gives).
TEST_F(ProfileRpcTest, JobIdIsResolvedByTheDaemon) {
  testing::Workload work({std::string(VIGIL_PROFILE_WORKLOADS) + "/hot_native_fp"});
  ASSERT_TRUE(work.WaitReady());
  RpcDispatcher jobs;
  daemon::RegisterProfileMethods(&jobs, [&](const std::string& job) {
    return job == "train-7" ? std::vector<int>{work.pid()} : std::vector<int>{};
  });
  RpcServerOptions o;
  o.tcp_listen = "127.0.0.1:0";
  RpcServer server(o, &jobs);
  ASSERT_TRUE(server.Start().ok());
  const std::string host = "127.0.0.1:" + std::to_string(server.tcp_port());

  ShellRun run = Shell(kVigil + " --host " + host +
                       " profile --job-id train-7 --duration 1s --unwind fp --top 3");
  ASSERT_EQ(run.rc, 0) << run.out;
  EXPECT_NE(run.out.find("vigil_test::HotLeaf(unsigned long)"), std::string::npos) << run.out;

  ShellRun unknown =
      Shell(kVigil + " --host " + host + " profile --job-id nobody --duration 1s --unwind fp");
  EXPECT_NE(unknown.rc, 0);
  EXPECT_NE(unknown.out.find("no process of job nobody is known on this host"), std::string::npos)
      << unknown.out;
  EXPECT_EQ(Shell(kVigil + " profile --job-id train-7 --all").rc, 2);
}

TEST_F(ProfileRpcTest, MethodRefusesBadRequestsAndOtherUsersProcesses) {
  CallerInfo stranger;
  stranger.transport = CallerInfo::Transport::kUnix;
  stranger.uid = 65534;
  stranger.gid = 65534;

  nlohmann::json no_pids = dispatcher_.Dispatch({{"fn", kProfileMethod}}, stranger);
  nlohmann::json too_long = dispatcher_.Dispatch(
      {{"fn", kProfileMethod}, {"pids", {1}}, {"duration_ms", 3600000}}, stranger);
  nlohmann::json not_yours =
      dispatcher_.Dispatch({{"fn", kProfileMethod}, {"pids", {1}}, {"duration_ms", 200}}, stranger);

  EXPECT_NE(no_pids.value("error", "").find("pids"), std::string::npos) << no_pids;
  EXPECT_NE(too_long.value("error", "").find("duration_ms"), std::string::npos) << too_long;
  EXPECT_NE(not_yours.value("error", "").find("another user"), std::string::npos) << not_yours;
  EXPECT_TRUE(dispatcher_.IsHeavy({{"fn", kProfileMethod}}));
}

}  // namespace
}  // namespace vigil
