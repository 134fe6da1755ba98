// SPDX-License-Identifier: Apache-2.0
#include "sinks/profile_uploader.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "base/gzip.h"
#include "base/wait_for.h"

namespace vigil {
namespace {

struct Received {
  std::string path, auth, encoding, body;
  std::map<std::string, std::string> params;
};

// A stand-in for vigil-fleet's CPU profile route: answers `statuses` in turn (then 200). The
// uploader against the real service is tests/fleet/fleet_cpu_profile_test.cc.
class Receiver {
 public:
  explicit Receiver(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    server_.Post("/fleet/api/v1/cpu-profiles",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard lock(mu_);
                   Received r{req.path,
                              req.get_header_value("Authorization"),
                              req.get_header_value("X-Sent-Encoding"),
                              req.body,
                              {}};
                   for (const auto& [k, v] : req.params) r.params[k] = v;
                   got_.push_back(std::move(r));
                   res.status = calls_ < statuses_.size() ? statuses_[calls_] : 200;
                   ++calls_;
                   res.set_content(R"({"error":"no"})", "application/json");
                 });
    // httplib would inflate a gzip body itself; the route sees it as sent, like vigil-fleet's
    // (before the body is read: the header is kept under another name).
    server_.set_pre_routing_handler([](const httplib::Request& req, httplib::Response&) {
      auto& r = const_cast<httplib::Request&>(req);
      r.set_header("X-Sent-Encoding", r.get_header_value("Content-Encoding"));
      r.headers.erase("Content-Encoding");
      return httplib::Server::HandlerResponse::Unhandled;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    WaitFor([this] { return server_.is_running(); });
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/fleet/api/v1/ingest";
  }
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

ProfileUploaderOptions Options(const std::string& url) {
  ProfileUploaderOptions o;
  o.url = url;
  o.host = "node07";
  o.token = "tok-7";
  o.backoff = {1'000'000, 5'000'000, 2.0, 0};
  return o;
}

ProfileUpload Window(const std::string& job, int64_t start_s, const std::string& folded) {
  return ProfileUpload{.job_id = job,
                       .start_unix_ns = start_s * 1000000000,
                       .end_unix_ns = (start_s + 60) * 1000000000,
                       .frequency_hz = 19,
                       .samples = 3,
                       .folded = folded};
}

TEST(ProfileUploaderTest, PostsEachWindowGzippedWithItsTokenAndWindow) {
  Receiver fleet;
  auto up = ProfileUploader::Create(Options(fleet.url()));
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ((*up)->StatusJson()["state"], "idle");
  ASSERT_TRUE((*up)->Enqueue(Window("job 1", 1000, "p;main;f 3\n")));
  (*up)->WaitIdle(30'000'000'000);
  const std::vector<Received> got = fleet.got();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].auth, "Bearer tok-7");
  EXPECT_EQ(got[0].encoding, "gzip");
  EXPECT_EQ(Gunzip(got[0].body, 1 << 20).value(), "p;main;f 3\n");
  EXPECT_EQ(got[0].params.at("job_id"), "job 1");
  EXPECT_EQ(got[0].params.at("host"), "node07");
  EXPECT_EQ(got[0].params.at("start_ns"), "1000000000000");
  EXPECT_EQ(got[0].params.at("end_ns"), "1060000000000");
  EXPECT_EQ(got[0].params.at("frequency_hz"), "19");
  const nlohmann::json s = (*up)->StatusJson();
  EXPECT_EQ(s["state"], "ok");
  EXPECT_EQ(s["uploaded"], 1);
  EXPECT_EQ(s["samples_sent"], 3);
  EXPECT_EQ(s["queued"], 0);
  EXPECT_EQ(s["url"],
            fleet.url().substr(0, fleet.url().find("/fleet")) + "/fleet/api/v1/cpu-profiles");
}

TEST(ProfileUploaderTest, RetriesWhatMayPassInOrderAndDropsRefusals) {
  Receiver fleet({503, 429, 400});
  auto up = ProfileUploader::Create(Options(fleet.url()));
  ASSERT_TRUE(up.ok());
  (*up)->Enqueue(Window("a", 1000, "p;f 1\n"));
  (*up)->Enqueue(Window("b", 1060, "p;f 1\n"));
  ASSERT_TRUE(WaitFor([&] { return fleet.got().size() >= 4; }, 30));
  (*up)->WaitIdle(30'000'000'000);
  const std::vector<Received> got = fleet.got();
  ASSERT_EQ(got.size(), 4u);
  // 503 and 429 retried the first window; the 400 refused it for good; the second went next.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i].params.at("job_id"), "a") << i;
  EXPECT_EQ(got[3].params.at("job_id"), "b");
  const nlohmann::json s = (*up)->StatusJson();
  EXPECT_EQ(s["uploaded"], 1);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["state"], "ok");
  EXPECT_NE(s["last_error"].get<std::string>().find("HTTP 400"), std::string::npos) << s;
}

TEST(ProfileUploaderTest, AnUnreachableFleetIsReportedAndBoundsTheQueue) {
  // A port bound and closed again: nothing listens there, so connections are refused at once.
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    close(fd);
  }
  ProfileUploaderOptions o = Options("http://127.0.0.1:" + std::to_string(port));
  o.max_queue = 2;
  o.backoff = {60'000'000'000, 60'000'000'000, 2.0, 0};  // One try, then a long wait.
  auto up = ProfileUploader::Create(o);
  ASSERT_TRUE(up.ok());
  for (int i = 0; i < 5; ++i) (*up)->Enqueue(Window("j", 1000 + 60 * i, "p;f 1\n"));
  // Three windows over the bound are dropped; the head one waits for its retry.
  ASSERT_TRUE(WaitFor(
      [&] {
        const nlohmann::json s = (*up)->StatusJson();
        return s["failed"] == 3 && s["queued"] == 2 && s["state"] == "retrying";
      },
      30))
      << (*up)->StatusJson().dump();
  const nlohmann::json s = (*up)->StatusJson();
  EXPECT_EQ(s["state"], "retrying");
  EXPECT_EQ(s["uploaded"], 0);
  EXPECT_EQ(s["queued"], 2);
  EXPECT_TRUE(s.contains("last_error")) << s;
  (*up)->Stop();
  EXPECT_EQ((*up)->StatusJson()["failed"], 5);  // What waited is dropped, and counted, at stop.
  EXPECT_FALSE((*up)->Enqueue(Window("j", 2000, "p;f 1\n")));
}

TEST(ProfileUploaderTest, BadUrlsAndOversizeWindowsAreRefused) {
  EXPECT_FALSE(ProfileUploader::Create(Options("ftp://x")).ok());
  EXPECT_FALSE(ProfileUploader::Create(Options("http://")).ok());
  ProfileUploaderOptions no_host = Options("http://127.0.0.1:1");
  no_host.host.clear();
  EXPECT_FALSE(ProfileUploader::Create(no_host).ok());

  Receiver fleet;
  ProfileUploaderOptions o = Options(fleet.url());
  o.max_upload_bytes = 64;
  auto up = ProfileUploader::Create(o);
  ASSERT_TRUE(up.ok());
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "p;f" + std::to_string(i * 7919) + " 1\n";
  (*up)->Enqueue(Window("j", 1000, big));
  (*up)->WaitIdle(30'000'000'000);
  EXPECT_TRUE(fleet.got().empty());
  const nlohmann::json s = (*up)->StatusJson();
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["state"], "failing");
  EXPECT_NE(s["last_error"].get<std::string>().find("over the cap of 64"), std::string::npos);
}

}  // namespace
}  // namespace vigil
