// SPDX-License-Identifier: Apache-2.0
// End-to-end over real sockets: the spec-built Kineto client against FabricServer.
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/wait_for.h"
#include "ipc/fabric_server.h"
#include "ipc/ipc_test_util.h"
#include "ipc/trace_rpc.h"
#include "ipc/trace_sessions.h"
#include "kineto_spec_client.h"

namespace vigil {
namespace {

using testing_util::KinetoSpecClient;
using testing_util::OwnAncestorPids;

constexpr int64_t kSecond = 1000000000;

class FabricTest : public ::testing::Test {
 protected:
  void StartDaemon(bool verify = true, std::string socket_dir = "") {
    ProcessRegistryOptions ro;
    ro.verify_credentials = verify;
    ro.match_only_live = verify;  // Unverified registrations use made-up pids.
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
    TraceServiceOptions to;
    to.trace_root = root_.path() + "/traces";
    to.max_starts_per_minute = 0;
    service_ = std::make_unique<TraceService>(to, registry_.get());
    server_ = std::make_unique<FabricServer>(registry_.get(), nullptr);
    options_.ipc_name = fmt::format("vigil-fabric-test-{}-{}", getpid(), ++serial_);
    options_.socket_dir = socket_dir;
    ASSERT_TRUE(server_->Start(options_).ok());
  }

  std::unique_ptr<KinetoSpecClient> Client(const std::string& tag) {
    // Kineto names itself "dynoconfigclient" + a UUID; any unique name works the same.
    auto c = std::make_unique<KinetoSpecClient>(
        fmt::format("dynoconfigclient-{}-{}-{}", getpid(), serial_, tag), options_.ipc_name,
        options_.socket_dir);
    EXPECT_TRUE(c->ok());
    return c;
  }

  nlohmann::json Dyno(int64_t job, const std::string& log_file, int limit = 3) {
    nlohmann::json req{
        {"fn", "setKinetOnDemandRequest"},
        {"config", (log_file.empty() ? "" : "ACTIVITIES_LOG_FILE=" + log_file + "\n") +
                       "PROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=500"},
        {"job_id", job},
        {"pids", {0}},
        {"process_limit", limit}};
    return HandleSetKinetOnDemandRequest(service_.get(), req, CallerInfo{});
  }

  static int serial_;
  testing_util::TempDir root_;
  testing_util::FakeClock clock_;
  FabricServerOptions options_;
  std::unique_ptr<ProcessRegistry> registry_;
  std::unique_ptr<TraceService> service_;
  std::unique_ptr<FabricServer> server_;
};
int FabricTest::serial_ = 0;

TEST_F(FabricTest, KinetoRegistersPollsAndItsTraceIsFollowedToTheFile) {
  StartDaemon();
  auto kineto = Client("a");
  const std::vector<int32_t> pids = OwnAncestorPids();
  EXPECT_EQ(kineto->RegisterContext(0, getpid(), 4242), 1);
  EXPECT_EQ(kineto->Poll(3, 4242, pids), "");  // Registered, nothing pending.

  nlohmann::json reply = Dyno(4242, "/tmp/gpu_trace.json");
  EXPECT_EQ(reply["processesMatched"], nlohmann::json::array({getpid()}));
  EXPECT_EQ(reply["activityProfilersTriggered"], nlohmann::json::array({getpid()}));

  auto config = kineto->Poll(3, 4242, pids);
  ASSERT_TRUE(config.has_value());
  auto sessions = service_->List();
  ASSERT_EQ(sessions.size(), 1u);
  const TraceSession& s = sessions[0];
  EXPECT_TRUE(s.log_file.rewritten);  // /tmp/gpu_trace.json is outside the trace root.
  EXPECT_NE(config->find("ACTIVITIES_LOG_FILE=" + s.log_file.path + "\n"), std::string::npos);
  EXPECT_NE(config->find("ACTIVITIES_DURATION_MSECS=500\n"), std::string::npos);
  // The delivered config names the request, as Dynolog's does (Kineto writes it into the
  // trace file's trace_id).
  EXPECT_NE(config->find("REQUEST_TRACE_ID=" + s.trace_id), std::string::npos) << *config;
  EXPECT_EQ(service_->Get(s.trace_id)->processes[0].state, TraceState::kDelivered);
  EXPECT_EQ(kineto->Poll(3, 4242, pids), "");  // Delivered once.

  // Kineto writes <log>_<pid>.json when the trace is done.
  const std::string written = KinetoTraceFileForPid(s.log_file.path, getpid());
  ASSERT_TRUE(WriteFileAtomic(written, std::string(1000, ' ')).ok());
  clock_.Advance(kSecond);
  service_->Tick();
  clock_.Advance(3 * kSecond);
  service_->Tick();
  auto done = service_->Get(s.trace_id);
  EXPECT_EQ(done->processes[0].state, TraceState::kWritten);
  EXPECT_EQ(done->processes[0].size_bytes, 1000u);
  EXPECT_EQ(done->processes[0].path, written);
}

// Current Kineto sends no "ctxt" at start-up (registerInstance is gone), asks only for config
// type 2 (ACTIVITIES) and waits for each reply 9 x 10 ms. Its first poll registers it; every
// reply, and the trace config, comes within that window while 8 other processes (older Kineto:
// type 3) poll the daemon every 10 ms, as often as 4,000 Kineto processes polling every 5 s.
TEST_F(FabricTest, NewerKinetoWithoutCtxtAskingOnlyForActivitiesIsAnsweredWithinItsWindow) {
  StartDaemon();
  constexpr int kFlooders = 8;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::vector<pid_t> flooders;
  struct Reap {
    std::vector<pid_t>* pids;
    ~Reap() {
      for (pid_t p : *pids) {
        kill(p, SIGKILL);
        waitpid(p, nullptr, 0);
      }
    }
  } reap{&flooders};
  for (int i = 0; i < kFlooders; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(ready[0]);
      KinetoSpecClient c(fmt::format("dynoconfigclient-{}-{}-flood{}", getppid(), serial_, i),
                         options_.ipc_name);
      for (int answered = 0; c.ok();) {
        answered += c.Poll(3, 9, {getpid()}).has_value();
        usleep(10000);
        if (answered == 100) {
          (void)!write(ready[1], "x", 1);
        }
      }
      _exit(1);
    }
    flooders.push_back(child);
  }
  close(ready[1]);
  for (int i = 0; i < kFlooders; ++i) {  // Every flooder has had 100 answers and goes on.
    pollfd pfd{ready[0], POLLIN, 0};
    char byte;
    ASSERT_TRUE(poll(&pfd, 1, 60000) == 1 && read(ready[0], &byte, 1) == 1) << i;
  }
  close(ready[0]);
  auto kineto = Client("new");
  const std::vector<int32_t> pids = OwnAncestorPids();
  int answered = 0;
  for (int i = 0; i < 50; ++i) {
    answered += kineto->PollAsKineto(2, 4242, pids) == std::optional<std::string>("");
  }
  EXPECT_EQ(answered, 50);
  ASSERT_EQ(registry_->Match("4242", {}).size(), 1u);  // Registered by its polls alone.
  nlohmann::json reply = Dyno(4242, "");
  ASSERT_EQ(reply["activityProfilersTriggered"], nlohmann::json::array({getpid()}));
  auto config = kineto->PollAsKineto(2, 4242, pids);
  ASSERT_TRUE(config.has_value()) << "no reply within Kineto's 90 ms";
  EXPECT_NE(config->find("ACTIVITIES_LOG_FILE="), std::string::npos) << *config;
  EXPECT_GT(registry_->counters().datagrams.load(), kFlooders * 100u);
}

TEST_F(FabricTest, RefusesClaimsOnPidsTheSenderDoesNotOwn) {
  StartDaemon();
  auto thief = Client("thief");
  EXPECT_EQ(thief->RegisterContext(0, 1, 4242), -1);
  EXPECT_EQ(thief->Poll(2, 4242, {1}), "");
  EXPECT_EQ(registry_->size(), 0u);
  EXPECT_EQ(registry_->counters().refused_claims.load(), 2u);
  // A forged ancestor (here a child process: not an ancestor) never widens what it matches.
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[1]);
    char byte;
    (void)!read(pipe_fds[0], &byte, 1);
    _exit(0);
  }
  EXPECT_EQ(thief->Poll(2, 4242, {getpid(), child}), "");
  EXPECT_EQ(registry_->Match("4242", {}).size(), 1u);
  EXPECT_TRUE(registry_->Match("4242", {child}).empty());
  EXPECT_EQ(registry_->counters().dropped_ancestors.load(), 1u);
  close(pipe_fds[1]);
  waitpid(child, nullptr, 0);
  close(pipe_fds[0]);
}

TEST_F(FabricTest, MalformedAndOversizedDatagramsAreCountedAndDoNotStallOthers) {
  StartDaemon();
  auto bad = Client("bad");
  std::string header(40, '\0');
  ASSERT_TRUE(bad->SendRaw("short"));
  std::string mismatch = header;
  mismatch[0] = 10;  // Claims 10 payload bytes, sends 3.
  std::memcpy(mismatch.data() + 8, "req", 3);
  ASSERT_TRUE(bad->SendRaw(mismatch + "abc"));
  ASSERT_TRUE(bad->Send("nonsense", "x"));
  ASSERT_TRUE(bad->Send("req", std::string(20, '\x01')));  // n=16843009 in 20 bytes.
  ASSERT_TRUE(bad->Send("ctxt", std::string(15, '\x01')));
  ASSERT_TRUE(bad->SendRaw(std::string(100 * 1024, 'z')));  // Above the datagram cap.
  ASSERT_TRUE(WaitFor([&] { return registry_->counters().datagrams.load() >= 6; }));
  EXPECT_EQ(registry_->counters().malformed.load(), 4u);
  EXPECT_EQ(registry_->counters().unknown_type.load(), 1u);
  EXPECT_EQ(registry_->counters().oversized.load(), 1u);
  auto good = Client("good");
  EXPECT_EQ(good->Poll(2, 7, OwnAncestorPids()), "");
}

// Reply starvation: another user (uid 65534) opens 200 sockets that poll and never read. Their
// unread replies once filled the daemon's one send buffer, and a Kineto process of another user
// then got none of its replies (each must come within Kineto's short wait).
TEST_F(FabricTest, PeersThatNeverReadDoNotStarveAnotherUsersKinetoPolls) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to send as another uid";
  }
  StartDaemon();
  constexpr int kFlooders = 200;
  constexpr int kPollsEach = 20;
  std::vector<std::unique_ptr<KinetoSpecClient>> flooders;
  for (int i = 0; i < kFlooders; ++i) {
    flooders.push_back(Client("flood" + std::to_string(i)));
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = setgroups(0, nullptr) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
    for (int n = 0; ok && n < kPollsEach; ++n) {
      for (auto& f : flooders) {
        ok = ok && f->SendPoll(3, 0, {getpid()});
      }
    }
    _exit(ok ? 0 : 1);
  }
  int status = -1;
  const bool exited = WaitFor([&] { return waitpid(child, &status, WNOHANG) == child; }, 60);
  if (!exited) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  }
  ASSERT_TRUE(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const IpcCounters& c = registry_->counters();
  ASSERT_TRUE(WaitFor([&] { return c.datagrams.load() >= kFlooders * kPollsEach; }, 60));
  EXPECT_GT(c.replies_unread.load() + c.replies_over_budget.load(), 0u);  // Backlogs are full.

  auto kineto = Client("victim");
  const std::vector<int32_t> pids = OwnAncestorPids();
  int answered = 0;
  for (int i = 0; i < 20; ++i) {
    answered += kineto->Poll(3, 4242, pids).has_value();
  }
  EXPECT_EQ(answered, 20);
}

TEST_F(FabricTest, ServesAThousandRegisteredProcesses) {
  StartDaemon(/*verify=*/false);
  constexpr int kSockets = 10;
  constexpr int kPerSocket = 100;
  std::vector<std::unique_ptr<KinetoSpecClient>> clients;
  for (int i = 0; i < kSockets; ++i) {
    clients.push_back(Client(std::to_string(i)));
  }
  for (int i = 0; i < kSockets; ++i) {
    for (int j = 0; j < kPerSocket; ++j) {
      const int32_t pid = 100000 + i * kPerSocket + j;
      ASSERT_EQ(clients[i]->Poll(2, 77, {pid, 99}), "") << pid;
    }
  }
  EXPECT_EQ(registry_->size(), 1000u);
  nlohmann::json reply = Dyno(77, root_.path() + "/traces/run/t.json", 1000);
  EXPECT_EQ(reply["activityProfilersTriggered"].size(), 1000u);
  // The file name is kept; the directory is the one the daemon made for this trace.
  const std::string log_file = service_->List()[0].log_file.path;
  EXPECT_EQ(log_file, root_.path() + "/traces/" + service_->List()[0].trace_id + "/t.json");
  int delivered = 0;
  for (int i = 0; i < kSockets; ++i) {
    for (int j = 0; j < kPerSocket; ++j) {
      auto config = clients[i]->Poll(2, 77, {100000 + i * kPerSocket + j, 99});
      delivered += config && config->find("ACTIVITIES_LOG_FILE=" + log_file) != std::string::npos;
    }
  }
  EXPECT_EQ(delivered, 1000);
  EXPECT_EQ(service_->List()[0].processes.size(), 1000u);
}

TEST_F(FabricTest, SilentProcessesExpireAndTheirTracesSaySo) {
  StartDaemon();
  auto kineto = Client("e");
  ASSERT_EQ(kineto->Poll(2, 5, OwnAncestorPids()), "");
  Dyno(5, "");
  clock_.Advance(61 * kSecond);
  service_->Tick();
  EXPECT_EQ(registry_->size(), 0u);
  EXPECT_EQ(service_->List()[0].processes[0].state, TraceState::kExpired);
}

TEST_F(FabricTest, WorksUnderKinetoIpcSocketDir) {
  testing_util::TempDir dir;
  StartDaemon(true, dir.path());
  EXPECT_TRUE(PathExists(dir.path() + "/" + options_.ipc_name));
  auto kineto = Client("fs");
  EXPECT_EQ(kineto->RegisterContext(1, getpid(), 0), 1);
  EXPECT_EQ(registry_->Match("0", {}).size(), 1u);
}

}  // namespace
}  // namespace vigil
