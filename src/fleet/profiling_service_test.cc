// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_service.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/wait_for.h"
#include "fleet/profiling_test_util.h"
#include "rpc/rpc_server.h"

namespace vigil {
namespace {

using fleet_test::kSec;
using fleet_test::kT0;
using nlohmann::json;

constexpr int64_t kNow = kT0 + 10 * 60 * kSec;

std::string Fixture(const std::string& name) {
  auto data = ReadSmallFile(std::string(VIGIL_TEST_DATA_DIR) + "/traces/" + name, 64 << 20);
  EXPECT_TRUE(data.ok()) << name;
  return data.ok() ? *data : "";
}

// A daemon's control RPC answering vigilTraceStart as vigild does, recording what it was sent.
class FakeDaemon {
 public:
  explicit FakeDaemon(int triggered) : triggered_(triggered) {
    dispatcher_.Register(
        "vigilTraceStart",
        [this](const json& req, const CallerInfo& caller) {
          std::lock_guard lock(mu_);
          requests_.push_back(req);
          authenticated_ = caller.authenticated;
          return json{
              {"trace_id", "tr-fake-0001"}, {"triggered", triggered_}, {"matched", triggered_}};
        },
        RpcAccess::kControl);
    RpcServerOptions o;
    o.tcp_listen = "127.0.0.1:0";
    o.token = "daemon-secret";
    server_ = std::make_unique<RpcServer>(o, &dispatcher_);
    EXPECT_TRUE(server_->Start().ok());
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_->tcp_port()); }
  std::vector<json> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  bool authenticated() {
    std::lock_guard lock(mu_);
    return authenticated_;
  }
  void set_triggered(int n) {
    std::lock_guard lock(mu_);
    triggered_ = n;
  }

 private:
  RpcDispatcher dispatcher_;
  std::unique_ptr<RpcServer> server_;
  std::mutex mu_;
  std::vector<json> requests_;
  bool authenticated_ = false;
  int triggered_;
};

class ProfilingServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // "good" holds GPUs on node-a (a daemon that triggers two processes) and node-b (no daemon
    // listening); "gone" stopped reporting long ago.
    ledger_.Push({{"good", "node-a", "GPU-1", 0, {0.3}},
                  {"good", "node-b", "GPU-2", 0, {0.3}},
                  {"gone", "node-c", "GPU-3", 0, {0.3}}},
                 10, {{"node-a", daemon_.address()}, {"node-b", "127.0.0.1:1"}});
    ASSERT_TRUE(WriteFileAtomic(ledger_.dir() + "/daemon-tokens", "node-a daemon-secret\n").ok());
  }

  std::unique_ptr<ProfilingService> Service(ProfilingMode mode = ProfilingMode::kManual) {
    ProfilingOptions o;
    o.mode = mode;
    o.daemon_token_file = ledger_.dir() + "/daemon-tokens";
    o.clock = [this] { return now_.load(); };
    o.rpc_deadline_ns = 2 * kSec;
    o.vigil_binary = std::string(VIGIL_BIN_DIR) + "/vigil";  // Analyses run as a child.
    o.host_recent_ns = 5 * 60 * kSec;
    o.store_analysis = [this](const AnalysisUpload& u) -> StatusOr<int64_t> {
      std::lock_guard lock(mu_);
      stored_.push_back(u);
      return 4000 + static_cast<int64_t>(stored_.size());
    };
    auto s = ProfilingService::Create(o, ledger_.store());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  fleet_test::LedgerFixture ledger_;
  FakeDaemon daemon_{2};
  std::atomic<int64_t> now_{kNow};
  std::mutex mu_;
  std::vector<AnalysisUpload> stored_;
};

// One rank per request here: analysing several ranks is the end-to-end test's
// (tests/fleet/fleet_profiling_test.cc).
TEST_F(ProfilingServiceTest, StartsTracesCollectsUploadsAnalysesAndStoresTheReport) {
  daemon_.set_triggered(1);
  auto service = Service();
  ASSERT_TRUE(service);
  ProfilingRequestSpec spec{"good", 500, 0, "manual: slow steps", "manual"};
  auto created = service->Create(spec);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string id = created->request_id;
  ASSERT_EQ(created->hosts.size(), 2u);

  ASSERT_TRUE(WaitFor([&] { return service->Get(id)->state != "starting"; }));
  auto r = *service->Get(id);
  EXPECT_EQ(r.state, "collecting");
  EXPECT_EQ(r.hosts[0].host, "node-a");
  EXPECT_EQ(r.hosts[0].state, "tracing");
  EXPECT_EQ(r.hosts[0].expected_files, 1);
  EXPECT_EQ(r.hosts[0].trace_id, "tr-fake-0001");
  EXPECT_EQ(r.hosts[1].host, "node-b");
  EXPECT_EQ(r.hosts[1].state, "failed");  // Recorded; node-a proceeds.
  EXPECT_FALSE(r.hosts[1].error.empty());
  ASSERT_EQ(daemon_.requests().size(), 1u);
  const json sent = daemon_.requests()[0];
  EXPECT_EQ(sent["job_id"], "good");
  EXPECT_EQ(sent["duration_ms"], 500);
  EXPECT_EQ(sent["upload"]["request_id"], id);
  EXPECT_GT(sent["profile_start_time"].get<int64_t>(), kNow / 1000000);
  EXPECT_TRUE(daemon_.authenticated());  // The token from --daemon-token-file.

  // Uploads: checked before anything is written.
  const std::string rank0 = Fixture("nccl_sampled_rank-0.json.gz");
  EXPECT_EQ(service->AcceptUpload("prof-nope", "node-a", 1, 0, "t", rank0).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(service->AcceptUpload(id, "node-c", 1, 0, "t", rank0).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(service->AcceptUpload(id, "node-a", 1, 0, "t", "{}").status().code(),
            StatusCode::kInvalidArgument);

  auto f1 = service->AcceptUpload(id, "node-a", 101, 0, "tr-fake-0001", rank0);
  ASSERT_TRUE(f1.ok()) << f1.status().ToString();
  EXPECT_EQ(f1->path, r.trace_dir + "/node-a-101-rank0.json.gz");

  ASSERT_TRUE(WaitFor([&] { return service->Get(id)->Terminal(); }));
  r = *service->Get(id);
  ASSERT_EQ(r.state, "analysed") << r.error;
  EXPECT_EQ(r.analysis_id, 4001);
  std::lock_guard lock(mu_);
  ASSERT_EQ(stored_.size(), 1u);
  EXPECT_EQ(stored_[0].job_id, "good");
  EXPECT_EQ(stored_[0].source, "profiling");
  EXPECT_EQ(stored_[0].host, "node-a");
  EXPECT_EQ(stored_[0].reason, "manual: slow steps");
  EXPECT_EQ(stored_[0].trace_path, r.trace_dir);
  const json report = json::parse(stored_[0].report_json, nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["ranks"].size(), 1u);
}

TEST_F(ProfilingServiceTest, ARestartResumesCollectingAndTheUploadsStillCount) {
  daemon_.set_triggered(1);
  std::string open_id;
  {
    auto service = Service();
    auto r = service->Create({"good", 0, 0, "", "manual"});
    ASSERT_TRUE(r.ok());
    open_id = r->request_id;
    ASSERT_TRUE(WaitFor([&] { return service->Get(open_id)->state == "collecting"; }));
  }
  auto service = Service();
  auto list = service->List("", 10);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].request_id, open_id);
  EXPECT_EQ(list[0].state, "collecting");  // Resumed, not failed.
  EXPECT_EQ(list[0].hosts.size(), 2u);
  EXPECT_EQ(list[0].duration_ms, 2000);  // The default.
  EXPECT_TRUE(service->EverProfiled("good"));
  EXPECT_FALSE(service->EverProfiled("gone"));
  // The daemon's upload, retried after the restart, completes the request.
  auto f = service->AcceptUpload(open_id, "node-a", 101, 0, "tr-fake-0001",
                                 Fixture("nccl_sampled_rank-0.json.gz"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return service->Get(open_id)->Terminal(); }));
  EXPECT_EQ(service->Get(open_id)->state, "analysed") << service->Get(open_id)->error;
}

TEST_F(ProfilingServiceTest, ARestartReanalysesWhatItCutShortAndEndsWhatWasStarting) {
  // Left by a restart: one request with its files whose analysis was running, one still
  // calling the daemons (it cannot know which hosts started a trace).
  const std::string dir = ledger_.dir() + "/restart-traces";
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(
      WriteFileAtomic(dir + "/node-a-101-rank0.json.gz", Fixture("nccl_sampled_rank-0.json.gz"))
          .ok());
  ProfilingRequest analysing;
  analysing.request_id = "prof-analysing";
  analysing.job_id = "good";
  analysing.reason = "manual: before the restart";
  analysing.trigger = "manual";
  analysing.state = "analysing";
  analysing.created_ns = analysing.updated_ns = kNow;
  analysing.deadline_ns = kNow + 60 * kSec;
  analysing.trace_dir = dir;
  analysing.hosts = {{"node-a", "", "tracing", "tr-1", 1, ""}};
  analysing.files = {{"node-a", 101, 0, "tr-1", dir + "/node-a-101-rank0.json.gz", 1, kNow}};
  ProfilingRequest starting = analysing;
  starting.request_id = "prof-starting";
  starting.state = "starting";
  starting.files.clear();
  starting.trace_dir.clear();
  for (const ProfilingRequest* r : {&analysing, &starting}) {
    ASSERT_TRUE(ledger_.store()
                    ->Write<int64_t>([&](Db& db) -> StatusOr<int64_t> {
                      VIGIL_RETURN_IF_ERROR(SaveProfilingRequest(db, *r));
                      return int64_t{0};
                    })
                    .ok());
  }
  auto service = Service();
  auto ended = service->Get("prof-starting");
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->state, "failed");
  EXPECT_EQ(ended->error, "vigil-fleet restarted while starting the traces");
  ASSERT_TRUE(WaitFor([&] { return service->Get("prof-analysing")->Terminal(); }));
  EXPECT_EQ(service->Get("prof-analysing")->state, "analysed")
      << service->Get("prof-analysing")->error;
  std::lock_guard lock(mu_);
  ASSERT_EQ(stored_.size(), 1u);
  EXPECT_EQ(stored_[0].reason, "manual: before the restart");
}

TEST_F(ProfilingServiceTest, ADaemonsOwnTraceBecomesARequestAnalysedOnceItsFilesAreIn) {
  auto service = Service();
  const DaemonTrace t{"node-a", "tr-auto-9", "good", 1, "auto:low_utilisation", "SM 6% for 10m"};
  StatusOr<std::string> id = service->AdoptDaemonTrace(t);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "daemon-node-a-tr-auto-9");
  EXPECT_EQ(*service->AdoptDaemonTrace(t), *id);  // A retry finds the same request.
  auto r = *service->Get(*id);
  EXPECT_EQ(r.state, "collecting");
  EXPECT_EQ(r.trigger, "daemon");
  EXPECT_EQ(r.reason, "auto:low_utilisation: SM 6% for 10m");
  ASSERT_EQ(r.hosts.size(), 1u);
  EXPECT_EQ(r.hosts[0].expected_files, 1);
  EXPECT_EQ(
      service
          ->AcceptUpload(*id, "node-b", 5, 0, "tr-auto-9", Fixture("nccl_sampled_rank-0.json.gz"))
          .status()
          .code(),
      StatusCode::kFailedPrecondition);  // Another host cannot add to it.
  ASSERT_TRUE(
      service
          ->AcceptUpload(*id, "node-a", 5, 0, "tr-auto-9", Fixture("nccl_sampled_rank-0.json.gz"))
          .ok());
  ASSERT_TRUE(WaitFor([&] { return service->Get(*id)->Terminal(); }));
  EXPECT_EQ(service->Get(*id)->state, "analysed") << service->Get(*id)->error;
  std::lock_guard lock(mu_);
  ASSERT_EQ(stored_.size(), 1u);
  EXPECT_EQ(stored_[0].job_id, "good");
  EXPECT_EQ(stored_[0].reason, "auto:low_utilisation: SM 6% for 10m");
}

TEST_F(ProfilingServiceTest, ADaemonsTraceWithoutItsIdentityIsRefused) {
  auto service = Service();
  for (const DaemonTrace& t : {DaemonTrace{"node-a", "", "good", 1, "auto:periodic", ""},
                               DaemonTrace{"node-a", "tr", "", 1, "auto:periodic", ""},
                               DaemonTrace{"node-a", "tr", "good", 0, "auto:periodic", ""},
                               DaemonTrace{"node-a", "tr", "good", 1 << 20, "auto:periodic", ""}}) {
    EXPECT_EQ(service->AdoptDaemonTrace(t).status().code(), StatusCode::kInvalidArgument);
  }
}

TEST_F(ProfilingServiceTest, RefusesWhenOffOrTheJobHasNoRecentHost) {
  auto off = Service(ProfilingMode::kOff);
  EXPECT_EQ(off->Create({"good", 0, 0, "", "manual"}).status().code(),
            StatusCode::kFailedPrecondition);
  off.reset();
  auto service = Service();
  now_ = kNow + 60 * 60 * kSec;
  EXPECT_EQ(service->Create({"good", 0, 0, "", "manual"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service->Create({"never-seen", 0, 0, "", "manual"}).status().code(),
            StatusCode::kNotFound);
}

TEST_F(ProfilingServiceTest, AnalysesWhatArrivedWhenTheDeadlinePasses) {
  auto service = Service();
  auto r = service->Create({"good", 500, 0, "", "manual"});
  ASSERT_TRUE(r.ok());
  const std::string id = r->request_id;
  ASSERT_TRUE(WaitFor([&] { return service->Get(id)->state == "collecting"; }));
  ASSERT_TRUE(
      service->AcceptUpload(id, "node-a", 7, 0, "", Fixture("nccl_sampled_rank-0.json.gz")).ok());
  EXPECT_EQ(service->Get(id)->state, "collecting");  // One of two.
  now_ = service->Get(id)->deadline_ns + 1;
  ASSERT_TRUE(WaitFor([&] { return service->Get(id)->Terminal(); }));
  auto done = *service->Get(id);
  EXPECT_EQ(done.state, "analysed");
  EXPECT_EQ(done.error, "1 of 2 files arrived by the deadline; analysing those");
  EXPECT_EQ(service->AcceptUpload(id, "node-a", 8, 1, "", Fixture("nccl_sampled_rank-0.json.gz"))
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace vigil
