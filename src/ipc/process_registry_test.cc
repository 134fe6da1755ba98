// SPDX-License-Identifier: Apache-2.0
#include "ipc/process_registry.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"

namespace vigil {
namespace {

using testing_util::FakeClock;
using testing_util::TempDir;
using testing_util::WriteProcStatus;

constexpr int64_t kSecond = 1000000000;

class RegistryTest : public ::testing::Test {
 protected:
  RegistryTest() {
    // Host view: 500 (pid 7 in a container) <- 400 (pid 1 in it) <- 300 (host only) <- 1.
    WriteProcStatus(dir_.path(), 500, "500\t7", 400);
    WriteProcStatus(dir_.path(), 400, "400\t1", 300);
    WriteProcStatus(dir_.path(), 300, "300", 1);
    WriteProcStatus(dir_.path(), 1, "1", 0);
    // A plain host process 600 <- 300.
    WriteProcStatus(dir_.path(), 600, "600", 300);
    ProcessRegistryOptions options;
    options.proc_root = dir_.path();
    registry_ = std::make_unique<ProcessRegistry>(options, clock_.Fn());
  }

  StatusOr<std::string> Poll(int cred_pid, int64_t job, std::vector<int32_t> pids) {
    return registry_->Poll(PeerCredentials{cred_pid, 1000, 1000},
                           KinetoRequest{kKinetoConfigActivities, job, std::move(pids)}, from_);
  }

  TempDir dir_;
  FakeClock clock_;
  IpcAddress from_;
  std::unique_ptr<ProcessRegistry> registry_;
};

TEST(ProcStatusIdsTest, ParsesNspidAndPpid) {
  auto ids = ParseProcStatusIds("Name:\tx\nPPid:\t12\nNSpid:\t500\t7\n");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->ppid, 12);
  EXPECT_EQ(ids->ns_pids, (std::vector<int32_t>{500, 7}));
  EXPECT_FALSE(ParseProcStatusIds("Name:\tx\n").ok());
  EXPECT_FALSE(ParseProcStatusIds("PPid:\t1\nNSpid:\tabc\n").ok());
}

TEST_F(RegistryTest, ContainerisedSenderMayClaimItsNamespacePid) {
  auto claim = registry_->VerifyClaim({500, 0, 0}, {7, 1});
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ(claim->pids, (std::vector<int32_t>{7, 1}));
  EXPECT_EQ(claim->host_pids, (std::vector<int32_t>{500, 400}));
}

TEST_F(RegistryTest, RefusesAClaimOnAnotherProcessPid) {
  auto claim = registry_->VerifyClaim({500, 0, 0}, {600});
  ASSERT_FALSE(claim.ok());
  EXPECT_EQ(claim.status().code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(Poll(500, 1, {600}).ok());
  EXPECT_EQ(registry_->counters().refused_claims.load(), 1u);
  EXPECT_EQ(registry_->size(), 0u);
}

TEST_F(RegistryTest, AProcessThatExitedNoLongerMatches) {
  ASSERT_TRUE(Poll(600, 5, {600}).ok());
  ASSERT_TRUE(Poll(300, 5, {300}).ok());
  EXPECT_EQ(registry_->Match("5", {}).size(), 2u);
  // 600 exits: its /proc entry goes, its registration stays until it expires.
  std::filesystem::remove_all(dir_.path() + "/600");
  EXPECT_EQ(registry_->size(), 2u);
  const std::vector<RegisteredProcess> live = registry_->Match("5", {});
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].host_pid, 300);
  EXPECT_TRUE(registry_->Match("", {600}).empty());
}

TEST_F(RegistryTest, RefusesDatagramsWithoutCredentials) {
  EXPECT_EQ(registry_->VerifyClaim({-1, -1, -1}, {7}).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(RegistryTest, DropsClaimedAncestorsThatAreNotAncestors) {
  auto claim = registry_->VerifyClaim({600, 0, 0}, {600, 300, 400});
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->pids, (std::vector<int32_t>{600, 300}));
  EXPECT_EQ(registry_->counters().dropped_ancestors.load(), 1u);
}

TEST_F(RegistryTest, UnreadableProcessIsTrustedOnlyForItsOwnPid) {
  EXPECT_TRUE(registry_->VerifyClaim({4242, 0, 0}, {4242, 1}).ok());
  EXPECT_EQ(registry_->VerifyClaim({4242, 0, 0}, {4242, 1})->pids, (std::vector<int32_t>{4242}));
  EXPECT_FALSE(registry_->VerifyClaim({4242, 0, 0}, {4243}).ok());
}

TEST_F(RegistryTest, VerifiedClaimsAreCachedForAWhile) {
  ASSERT_TRUE(registry_->VerifyClaim({500, 0, 0}, {7, 1}).ok());
  // The process re-parents (its old ancestor exits): the cached chain holds for 30 s.
  WriteProcStatus(dir_.path(), 500, "500\t7", 1);
  EXPECT_EQ(registry_->VerifyClaim({500, 0, 0}, {7, 1})->host_pids,
            (std::vector<int32_t>{500, 400}));
  clock_.Advance(31 * kSecond);
  EXPECT_EQ(registry_->VerifyClaim({500, 0, 0}, {7, 1})->host_pids, (std::vector<int32_t>{500}));
  // A different claim is never answered from the cache.
  EXPECT_FALSE(registry_->VerifyClaim({500, 0, 0}, {8}).ok());
}

TEST_F(RegistryTest, PollRegistersAndDeliversOfferedConfigOnce) {
  auto first = Poll(600, 77, {600, 300});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "");
  auto matched = registry_->Match("77", {300});
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_EQ(matched[0].pid, 600);
  EXPECT_EQ(matched[0].job_id, "77");

  ASSERT_TRUE(registry_->Offer(600, "ACTIVITIES_DURATION_MSECS=10", "tr-1"));
  EXPECT_FALSE(registry_->Offer(600, "X=1", "tr-2"));  // Busy: never overlap.
  EXPECT_EQ(*Poll(600, 77, {600, 300}), "ACTIVITIES_DURATION_MSECS=10\n");
  EXPECT_EQ(*Poll(600, 77, {600, 300}), "");
  EXPECT_FALSE(registry_->Offer(600, "X=1", "tr-2"));  // Still held until released.
  registry_->Release(600, "tr-1");
  EXPECT_TRUE(registry_->Offer(600, "X=1", "tr-2"));
}

TEST_F(RegistryTest, EventsOnlyPollDoesNotTakeActivityConfig) {
  ASSERT_TRUE(Poll(600, 77, {600}).ok());
  ASSERT_TRUE(registry_->Offer(600, "A=1", "tr-1"));
  auto events_only =
      registry_->Poll({600, 0, 0}, KinetoRequest{kKinetoConfigEvents, 77, {600}}, from_);
  EXPECT_EQ(*events_only, "");
  EXPECT_EQ(*Poll(600, 77, {600}), "A=1\n");
}

TEST_F(RegistryTest, MatchFollowsDynologRules) {
  ASSERT_TRUE(Poll(600, 77, {600, 300}).ok());
  ASSERT_TRUE(Poll(500, 0, {7, 1}).ok());
  EXPECT_EQ(registry_->Match("77", {}).size(), 1u);
  EXPECT_EQ(registry_->Match("77", {0}).size(), 1u);
  EXPECT_EQ(registry_->Match("0", {}).size(), 1u);
  EXPECT_EQ(registry_->Match("", {}).size(), 2u);
  EXPECT_EQ(registry_->Match("", {1}).size(), 1u);    // Namespace pid of 400.
  EXPECT_EQ(registry_->Match("", {400}).size(), 1u);  // Its host pid.
  EXPECT_TRUE(registry_->Match("78", {}).empty());
}

TEST_F(RegistryTest, StringJobIdsComeFromTheResolver) {
  ProcessRegistryOptions options;
  options.proc_root = dir_.path();
  std::vector<std::string> claims;
  options.settle_claim = [&](int32_t host_pid, const JobInfo& claim) {
    claims.push_back(claim.job_id);
    JobInfo job;
    job.job_id = host_pid == 500 ? "torchelastic-abc" : "";
    return job;
  };
  ProcessRegistry registry(options, clock_.Fn());
  ASSERT_TRUE(registry.Poll({500, 0, 0}, KinetoRequest{2, 0, {7}}, from_).ok());
  EXPECT_EQ(registry.Match("torchelastic-abc", {}).size(), 1u);
  EXPECT_EQ(registry.Match("0", {}).size(), 1u);  // Kineto sent no job: Dynolog's "0" matches.
  ASSERT_TRUE(registry.Poll({500, 0, 0}, KinetoRequest{2, 0, {7}}, from_).ok());
  EXPECT_EQ(claims, (std::vector<std::string>{""}));  // Settled once, at registration.
}

TEST_F(RegistryTest, ClaimedJobsAndLabelsAreWhatTheResolverSettles) {
  ProcessRegistryOptions options;
  options.proc_root = dir_.path();
  options.settle_claim = [](int32_t, const JobInfo& claim) {
    JobInfo job;  // The scheduler says job 1234 whatever the process claims.
    job.job_id = "1234";
    job.team = "llm";
    job.framework = claim.framework;
    return job;
  };
  ProcessRegistry registry(options, clock_.Fn());
  ASSERT_TRUE(registry.Poll({600, 0, 0}, KinetoRequest{2, 9999, {600}}, from_).ok());
  EXPECT_TRUE(registry.Match("9999", {}).empty());  // The claimed integer matches nothing.
  ASSERT_EQ(registry.Match("1234", {}).size(), 1u);
  EXPECT_EQ(registry.Match("1234", {})[0].framework, "pytorch");
  ClientRegistration reg;
  reg.pid = 500;
  reg.job_id = "victim-job";
  reg.team = "victims";
  reg.model = "theirs";
  auto p = registry.RegisterClient({500, 0, 0}, reg, from_);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->job_id, "1234");
  EXPECT_EQ(p->team, "llm");
  EXPECT_EQ(p->model, "");
  EXPECT_TRUE(registry.Match("victim-job", {}).empty());
}

TEST_F(RegistryTest, AClaimTheResolverWithdrawsLaterIsWithdrawnOnTheNextPoll) {
  ProcessRegistryOptions options;
  options.proc_root = dir_.path();
  bool scheduler_runs_1235 = false;
  options.settle_claim = [&](int32_t, const JobInfo& claim) {
    JobInfo job;
    job.job_id = scheduler_runs_1235 ? "" : claim.job_id;  // Accepted until job 1235 appears.
    return job;
  };
  ProcessRegistry registry(options, clock_.Fn());
  ASSERT_TRUE(registry.Poll({600, 0, 0}, KinetoRequest{2, 1235, {600}}, from_).ok());
  ASSERT_EQ(registry.Match("1235", {}).size(), 1u);

  scheduler_runs_1235 = true;
  clock_.Advance(10 * kSecond);
  ASSERT_TRUE(registry.Poll({600, 0, 0}, KinetoRequest{2, 1235, {600}}, from_).ok());
  EXPECT_EQ(registry.Match("1235", {}).size(), 1u);  // Settled at most every 30 s.
  clock_.Advance(21 * kSecond);
  ASSERT_TRUE(registry.Poll({600, 0, 0}, KinetoRequest{2, 1235, {600}}, from_).ok());
  EXPECT_TRUE(registry.Match("1235", {}).empty());
  ASSERT_TRUE(registry.Touch({600, 0, 0}).ok());
  EXPECT_EQ(registry.Find(600)->job_id, "");
}

class RecordingObserver : public RegistryObserver {
 public:
  void OnDelivered(int32_t host_pid, const std::string& trace_id, int64_t) override {
    delivered.push_back(fmt::format("{}:{}", host_pid, trace_id));
  }
  void OnExpired(int32_t host_pid, const std::string& trace_id, int64_t) override {
    expired.push_back(fmt::format("{}:{}", host_pid, trace_id));
  }
  std::vector<std::string> delivered, expired;
};

TEST_F(RegistryTest, ExpiresAfterSixtySecondsOfSilenceAndTellsTheObserver) {
  RecordingObserver observer;
  registry_->SetObserver(&observer);
  ASSERT_TRUE(Poll(600, 77, {600}).ok());
  ASSERT_TRUE(Poll(500, 77, {7}).ok());
  ASSERT_TRUE(registry_->Offer(500, "A=1", "tr-9"));
  clock_.Advance(59 * kSecond);
  ASSERT_TRUE(Poll(600, 77, {600}).ok());  // 600 keeps talking.
  EXPECT_EQ(registry_->Expire(), 0u);
  clock_.Advance(2 * kSecond);
  EXPECT_EQ(registry_->Expire(), 1u);
  EXPECT_EQ(registry_->size(), 1u);
  EXPECT_EQ(observer.expired, (std::vector<std::string>{"500:tr-9"}));
  EXPECT_TRUE(observer.delivered.empty());
  registry_->SetObserver(nullptr);
}

TEST_F(RegistryTest, ContextRegistrationCountsProcessesPerJobAndGpu) {
  auto a = registry_->RegisterContext({600, 0, 0}, KinetoContext{0, 600, 9}, from_);
  auto b = registry_->RegisterContext({500, 0, 0}, KinetoContext{0, 7, 9}, from_);
  auto c = registry_->RegisterContext({500, 0, 0}, KinetoContext{1, 7, 9}, from_);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, 1);
  EXPECT_EQ(*b, 2);
  EXPECT_EQ(*c, 1);
  EXPECT_FALSE(registry_->RegisterContext({500, 0, 0}, KinetoContext{0, 600, 9}, from_).ok());
}

TEST_F(RegistryTest, RefusesNewProcessesWhenFull) {
  ProcessRegistryOptions options;
  options.verify_credentials = false;
  options.max_processes = 2;
  ProcessRegistry registry(options, clock_.Fn());
  for (int pid = 10; pid < 13; ++pid) {
    (void)registry.Poll({pid, 0, 0}, KinetoRequest{2, 1, {pid}}, from_);
  }
  EXPECT_EQ(registry.size(), 2u);
  EXPECT_EQ(registry.counters().registry_full.load(), 1u);
}

}  // namespace
}  // namespace vigil
