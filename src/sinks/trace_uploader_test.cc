// SPDX-License-Identifier: Apache-2.0
#include "sinks/trace_uploader.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

struct Received {
  std::string target, auth, body;
  std::map<std::string, std::string> params;
};

// A stand-in for vigil-fleet's trace endpoint: answers `statuses` in turn (then 200).
class Receiver {
 public:
  explicit Receiver(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    server_.Post("/api/v1/traces", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      Received r{req.target, req.get_header_value("Authorization"), req.body, {}};
      for (const auto& [k, v] : req.params) r.params[k] = v;
      got_.push_back(std::move(r));
      res.status = calls_ < statuses_.size() ? statuses_[calls_] : 200;
      ++calls_;
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    WaitFor([this] { return server_.is_running(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/api/v1/ingest"; }
  std::vector<Received> got() {
    std::lock_guard lock(mu_);
    return got_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<int> statuses_;
  size_t calls_ = 0;
  std::vector<Received> got_;
};

class TraceUploaderTest : public ::testing::Test {
 protected:
  TraceUploaderTest() {
    char tmpl[] = "/tmp/vigil-upload-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TraceUploaderTest() override { std::filesystem::remove_all(dir_); }

  TraceUploaderOptions Options(const Receiver& r) {
    TraceUploaderOptions o;
    o.url = r.url();
    o.host = "node07";
    o.token = "tok-7";
    o.backoff = {1'000'000, 5'000'000, 2.0, 0};
    return o;
  }
  std::string WriteTrace(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  std::string dir_;
};

constexpr char kTrace[] =
    R"({"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank": 3,"world_size":8},)"
    R"("traceEvents":[]})";

TEST_F(TraceUploaderTest, PostsTheGzippedFileWithItsIdentityAndTheHostToken) {
  Receiver receiver;
  auto uploader = TraceUploader::Create(Options(receiver));
  ASSERT_TRUE(uploader.ok()) << uploader.status().ToString();
  TraceUpload u{"prof-1", "tr-1", "4242", WriteTrace("t_321.json", kTrace), 321, -1};
  ASSERT_TRUE((*uploader)->Enqueue(u));
  ASSERT_TRUE(WaitFor([&] { return receiver.got().size() == 1; }));
  Received r = receiver.got()[0];
  EXPECT_EQ(r.auth, "Bearer tok-7");
  StatusOr<std::string> inflated = Gunzip(r.body, 64 << 20);
  ASSERT_TRUE(inflated.ok()) << inflated.status().ToString();
  EXPECT_EQ(*inflated, kTrace);
  EXPECT_EQ(r.params["request_id"], "prof-1");
  EXPECT_EQ(r.params["host"], "node07");
  EXPECT_EQ(r.params["job_id"], "4242");
  EXPECT_EQ(r.params["pid"], "321");
  EXPECT_EQ(r.params["rank"], "3");
  EXPECT_EQ(r.params["trace_id"], "tr-1");
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["uploaded"] == 1; }));
  EXPECT_EQ((*uploader)->StatusJson()["recent"][0]["state"], "uploaded");
}

TEST_F(TraceUploaderTest, ATraceTakenWithoutARequestSaysWhereItCameFrom) {
  Receiver receiver;
  auto uploader = TraceUploader::Create(Options(receiver));
  ASSERT_TRUE(uploader.ok());
  TraceUpload u{"", "tr-auto", "77", WriteTrace("auto.json", "{}"), 44, 1};
  u.origin = "auto:low_utilisation";
  u.reason = "SM active 6% for 10m";
  u.expected_files = 2;
  ASSERT_TRUE((*uploader)->Enqueue(u));
  ASSERT_TRUE(WaitFor([&] { return receiver.got().size() == 1; }));
  auto params = receiver.got()[0].params;
  EXPECT_EQ(params.count("request_id"), 0u);
  EXPECT_EQ(params["origin"], "auto:low_utilisation");
  EXPECT_EQ(params["reason"], "SM active 6% for 10m");
  EXPECT_EQ(params["expected"], "2");
  EXPECT_EQ(params["trace_id"], "tr-auto");
  EXPECT_EQ(params["job_id"], "77");
  EXPECT_EQ(params["pid"], "44");
}

TEST_F(TraceUploaderTest, RetriesAServiceErrorAndGivesUpOnARefusal) {
  Receiver receiver({503, 503, 200, 404});
  auto uploader = TraceUploader::Create(Options(receiver));
  ASSERT_TRUE(uploader.ok());
  ASSERT_TRUE((*uploader)->Enqueue({"prof-2", "tr-2", "9", WriteTrace("a.json", "{}"), 1, 0}));
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["uploaded"] == 1; }));
  EXPECT_EQ(receiver.got().size(), 3u);
  EXPECT_EQ(receiver.got()[2].params["rank"], "0");

  ASSERT_TRUE((*uploader)->Enqueue({"unknown", "tr-3", "9", WriteTrace("b.json", "{}"), 2, -1}));
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["failed"] == 1; }));
  EXPECT_EQ(receiver.got().size(), 4u);  // A 404 is not retried.
  const auto status = (*uploader)->StatusJson();
  EXPECT_NE(status["recent"][0]["error"].get<std::string>().find("404"), std::string::npos)
      << status.dump();
}

// The uploader's queue is the shared push pipeline's: bounded, the oldest waiting upload is the one
// given up (and said so), and what is queued at Stop() is recorded, never silently lost.
TEST_F(TraceUploaderTest, AFullQueueGivesUpTheOldestAndStopAccountsForTheRest) {
  Receiver receiver(std::vector<int>(1000, 503));
  TraceUploaderOptions o = Options(receiver);
  o.max_queue = 2;
  o.backoff = BackoffOptions{60'000'000'000, 60'000'000'000, 1.0, 0.0};  // Retries wait a minute.
  auto uploader = TraceUploader::Create(o);
  ASSERT_TRUE(uploader.ok());
  for (int pid = 1; pid <= 3; ++pid) {
    ASSERT_TRUE((*uploader)->Enqueue({"p", "t", "j", WriteTrace("q.json", "{}"), pid, -1}));
  }
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["failed"] == 1; }));
  const auto full = (*uploader)->StatusJson();
  EXPECT_EQ(full["queued"], 2) << full.dump();
  bool said = false;
  for (const auto& r : full["recent"]) {
    said |= r.value("error", "") == "upload queue full" && r["pid"] == 1;
  }
  EXPECT_TRUE(said) << full.dump();
  (*uploader)->Stop();
  const auto stopped = (*uploader)->StatusJson();
  EXPECT_EQ(stopped["failed"], 3) << stopped.dump();
  EXPECT_EQ(stopped["queued"], 0) << stopped.dump();
  EXPECT_FALSE((*uploader)->Enqueue({"p", "t", "j", WriteTrace("q.json", "{}"), 4, -1}));
}

TEST_F(TraceUploaderTest, RefusesAFileOverTheCapWithoutSendingIt) {
  Receiver receiver;
  TraceUploaderOptions o = Options(receiver);
  o.max_file_bytes = 16;
  auto uploader = TraceUploader::Create(o);
  ASSERT_TRUE(uploader.ok());
  ASSERT_TRUE((*uploader)->Enqueue({"p", "t", "j", WriteTrace("big.json", kTrace), 5, -1}));
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["failed"] == 1; }));
  EXPECT_TRUE(receiver.got().empty());
}

TEST_F(TraceUploaderTest, GivesUpWhenTheDeadlinePassesWhileTheServiceIsDown) {
  Receiver receiver(std::vector<int>(1000, 503));
  TraceUploaderOptions o = Options(receiver);
  o.deadline_ns = 50'000'000;
  auto uploader = TraceUploader::Create(o);
  ASSERT_TRUE(uploader.ok());
  ASSERT_TRUE((*uploader)->Enqueue({"p", "t", "j", WriteTrace("c.json", "{}"), 5, -1}));
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["failed"] == 1; }));
  EXPECT_NE((*uploader)->StatusJson()["recent"][0]["error"].get<std::string>().find("deadline"),
            std::string::npos);
}

// The attack on the announced trace path: a link to a file only root may read, or a file of
// another user where the traced user's should be. Nothing is sent and nothing about it is said.
TEST_F(TraceUploaderTest, NeverUploadsALinkOrAFileOfAnotherOwner) {
  Receiver receiver;
  auto uploader = TraceUploader::Create(Options(receiver));
  ASSERT_TRUE(uploader.ok());
  const std::string secret = WriteTrace("secret", "root only");
  chmod(secret.c_str(), 0600);
  const std::string link = dir_ + "/t_9.json";
  ASSERT_EQ(symlink(secret.c_str(), link.c_str()), 0);
  TraceUpload through_link{"p", "t", "j", link, 9, -1};
  through_link.file.dir_path = dir_;
  through_link.file.relative = "t_9.json";
  through_link.file.owner_uid = static_cast<int>(geteuid());
  ASSERT_TRUE((*uploader)->Enqueue(through_link));
  TraceUpload other_owner{"p", "t", "j", secret, 10, -1};
  other_owner.file.dir_path = dir_;
  other_owner.file.relative = "secret";
  other_owner.file.owner_uid = static_cast<int>(geteuid()) + 1;  // The traced user is not root.
  ASSERT_TRUE((*uploader)->Enqueue(other_owner));
  ASSERT_TRUE(WaitFor([&] { return (*uploader)->StatusJson()["failed"] == 2; }));
  EXPECT_TRUE(receiver.got().empty());
  const nlohmann::json status = (*uploader)->StatusJson();
  for (const auto& recent : status["recent"]) {
    EXPECT_EQ(recent["bytes"], 0);
    EXPECT_NE(recent["error"].get<std::string>().find("refused"), std::string::npos) << recent;
  }
}

TEST(TraceUploaderStaticTest, RejectsABadUrlAndFindsTheRank) {
  TraceUploaderOptions o;
  o.url = "ftp://x";
  o.host = "h";
  EXPECT_FALSE(TraceUploader::Create(o).ok());
  EXPECT_EQ(TraceUploader::PeekRank(kTrace), 3);
  EXPECT_EQ(TraceUploader::PeekRank(R"({"traceEvents":[]})"), -1);
  EXPECT_EQ(TraceUploader::PeekRank(R"({"distributedInfo":{"rank":"x"}})"), -1);
}

}  // namespace
}  // namespace vigil
