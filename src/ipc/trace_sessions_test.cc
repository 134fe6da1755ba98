// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_sessions.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"

namespace vigil {
namespace {

using testing_util::FakeClock;
using testing_util::TempDir;

constexpr int64_t kSecond = 1000000000;

class TraceServiceTest : public ::testing::Test {
 protected:
  TraceServiceTest() {
    ProcessRegistryOptions ro;
    ro.match_only_live = false;  // The registered pids are made up.
    ro.verify_credentials = false;
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
    TraceServiceOptions to;
    to.trace_root = root_.path() + "/traces";
    to.unix_clock = [this] { return unix_ns_.load(); };
    service_ = std::make_unique<TraceService>(to, registry_.get());
  }

  std::string PollAs(int pid, int64_t job, std::vector<int32_t> chain = {}) {
    if (chain.empty()) {
      chain = {pid};
    }
    const int uid = static_cast<int>(geteuid());
    return registry_->Poll({pid, uid, uid}, KinetoRequest{2, job, chain}, IpcAddress{})
        .value_or("?");
  }

  void Tick(int64_t advance_ns) {
    clock_.Advance(advance_ns);
    unix_ns_ += advance_ns;
    service_->Tick();
  }

  TempDir root_;
  FakeClock clock_;
  std::atomic<int64_t> unix_ns_{int64_t{1'800'000'000} * kSecond};
  std::unique_ptr<ProcessRegistry> registry_;
  std::unique_ptr<TraceService> service_;
};

TEST_F(TraceServiceTest, FollowsAProcessFromQueuedToWritten) {
  PollAs(600, 5);
  TraceRequest req;
  req.job_id = "5";
  req.duration_ms = 100;
  auto session = service_->Start(req);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ(session->processes.size(), 1u);
  const std::string path = session->processes[0].path;
  EXPECT_EQ(path, root_.path() + "/traces/" + session->trace_id + "/trace_600.json");
  EXPECT_EQ(session->processes[0].state, TraceState::kQueued);
  EXPECT_TRUE(IsDirectory(root_.path() + "/traces/" + session->trace_id));

  const std::string config = PollAs(600, 5);
  EXPECT_NE(config.find("ACTIVITIES_DURATION_MSECS=100\n"), std::string::npos) << config;
  EXPECT_NE(config.find("ACTIVITIES_LOG_FILE=" + session->log_file.path), std::string::npos);
  EXPECT_NE(config.find("REQUEST_TRACE_ID=" + session->trace_id + "\n"), std::string::npos)
      << config;
  EXPECT_EQ(service_->Get(session->trace_id)->processes[0].state, TraceState::kDelivered);

  Tick(6 * kSecond);  // Warm-up over: running.
  EXPECT_EQ(service_->Get(session->trace_id)->processes[0].state, TraceState::kRunning);
  ASSERT_TRUE(WriteFileAtomic(path, "{\"traceEvents\": []}").ok());
  Tick(kSecond);
  Tick(3 * kSecond);  // Size stable: written.
  auto done = service_->Get(session->trace_id);
  EXPECT_EQ(done->processes[0].state, TraceState::kWritten);
  EXPECT_EQ(done->processes[0].size_bytes, 19u);
  EXPECT_TRUE(done->Done());
  // The process is free for the next trace.
  EXPECT_TRUE(registry_->Offer(600, "A=1", "next"));
}

TEST_F(TraceServiceTest, NeverOverlapsTracesOnOneProcess) {
  PollAs(600, 5);
  TraceRequest req;
  req.job_id = "5";
  auto first = service_->Start(req);
  auto second = service_->Start(req);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->processes.size(), 1u);
  EXPECT_TRUE(second->processes.empty());
  ASSERT_EQ(second->busy.size(), 1u);
  EXPECT_EQ(second->busy[0].second, first->trace_id);
}

TEST_F(TraceServiceTest, ExplainsWhyNothingMatched) {
  auto empty = service_->ExplainNoMatch("5", {});
  EXPECT_NE(empty["reason"].get<std::string>().find("KINETO_USE_DAEMON=1"), std::string::npos);
  PollAs(600, 7);
  auto other_job = service_->ExplainNoMatch("5", {});
  EXPECT_NE(other_job["reason"].get<std::string>().find("none has job id 5"), std::string::npos);
  ASSERT_EQ(other_job["registered"].size(), 1u);
  EXPECT_EQ(other_job["registered"][0]["job_id"], "7");
  EXPECT_EQ(other_job["registered"][0]["pid"], 600);
  auto other_pid = service_->ExplainNoMatch("7", {123});
  EXPECT_NE(other_pid["reason"].get<std::string>().find("pids [123]"), std::string::npos);
}

TEST_F(TraceServiceTest, RewritesLogFilesOutsideTheRoot) {
  PollAs(600, 5);
  TraceRequest req;
  req.job_id = "5";
  req.log_file = "/etc/x.json";
  auto session = service_->Start(req);
  ASSERT_TRUE(session.ok());
  EXPECT_TRUE(session->log_file.rewritten);
  EXPECT_EQ(session->log_file.path, root_.path() + "/traces/" + session->trace_id + "/x.json");
  EXPECT_NE(PollAs(600, 5).find("ACTIVITIES_LOG_FILE=" + session->log_file.path),
            std::string::npos);
}

TEST_F(TraceServiceTest, RawDynologConfigIsCheckedAgainstTheAllowList) {
  PollAs(600, 5);
  auto refused = service_->StartRaw("5", {}, "VERBOSE_LOG_LEVEL=9", 10, "test");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("VERBOSE_LOG_LEVEL"), std::string::npos);
  auto ok = service_->StartRaw("5", {}, "ACTIVITIES_DURATION_MSECS=50", 10, "test");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->processes.size(), 1u);
}

TEST_F(TraceServiceTest, FailsWhenNoFileAppearsByTheDeadline) {
  PollAs(600, 5);
  TraceRequest req;
  req.job_id = "5";
  req.duration_ms = 1000;
  auto session = service_->Start(req);
  PollAs(600, 5);
  for (int i = 0; i < 70; ++i) {
    PollAs(600, 5);  // Keep the process alive.
    Tick(kSecond);
  }
  auto s = service_->Get(session->trace_id);
  EXPECT_EQ(s->processes[0].state, TraceState::kFailed);
  EXPECT_NE(s->processes[0].reason.find("by the deadline"), std::string::npos);
}

TEST_F(TraceServiceTest, QueuedProcessThatVanishesExpires) {
  PollAs(600, 5);
  TraceRequest req;
  req.job_id = "5";
  auto session = service_->Start(req);
  Tick(61 * kSecond);
  auto s = service_->Get(session->trace_id);
  EXPECT_EQ(s->processes[0].state, TraceState::kExpired);
  EXPECT_TRUE(s->Done());
}

TEST_F(TraceServiceTest, CancelDropsUndeliveredConfig) {
  PollAs(600, 5);
  TraceRequest req;
  req.job_id = "5";
  auto session = service_->Start(req);
  auto cancelled = service_->Cancel(session->trace_id);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->processes[0].state, TraceState::kFailed);
  EXPECT_EQ(PollAs(600, 5), "");  // Nothing is delivered after the cancel.
  EXPECT_FALSE(service_->Cancel("tr-nope").ok());
}

TEST_F(TraceServiceTest, RespectsProcessLimitAndStartDelay) {
  PollAs(600, 5);
  PollAs(601, 5);
  PollAs(602, 5);
  TraceRequest req;
  req.job_id = "5";
  req.process_limit = 2;
  req.start_delay_ms = 3000;
  auto session = service_->Start(req);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->processes.size(), 2u);
  EXPECT_EQ(session->busy.size(), 1u);  // Matched, over the limit.
  const int64_t expected_start = unix_ns_.load() / 1000000 + 3000;
  EXPECT_NE(session->config.find("PROFILE_START_TIME=" + std::to_string(expected_start)),
            std::string::npos);
}

TEST_F(TraceServiceTest, RateLimitsStarts) {
  TraceServiceOptions to;
  to.trace_root = root_.path() + "/t2";
  to.max_starts_per_minute = 2;
  TraceService limited(to, registry_.get());
  TraceRequest req;
  EXPECT_TRUE(limited.Start(req).ok());
  EXPECT_TRUE(limited.Start(req).ok());
  EXPECT_EQ(limited.Start(req).status().code(), StatusCode::kResourceExhausted);
  registry_->SetObserver(service_.get());
}

// Found by fuzz/kineto_config_fuzzer. A local user's `dyno gputrace` asking for
// ACTIVITIES_LOG_FILE=<root>/. made the daemon treat the trace root as the trace's directory and
// chmod it 0777, dropping the sticky bit that keeps users from removing each other's traces.
TEST_F(TraceServiceTest, LogFileNamingTheRootLeavesTheRootAlone) {
  PollAs(600, 5);
  PollAs(601, 5);
  const std::string root = root_.path() + "/traces";
  ASSERT_TRUE(service_->StartRaw("5", {600}, "ACTIVITIES_DURATION_MSECS=100", 10, "test").ok());
  struct stat before {};
  ASSERT_EQ(stat(root.c_str(), &before), 0);

  auto session =
      service_->StartRaw("5", {601}, "ACTIVITIES_LOG_FILE=" + root + "/.", 10, "uid 65534");

  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE(session->log_file.rewritten);
  EXPECT_TRUE(session->log_file.path.starts_with(root + "/" + session->trace_id + "/"));
  struct stat after {};
  ASSERT_EQ(stat(root.c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 07777, before.st_mode & 07777);
}

}  // namespace
}  // namespace vigil
