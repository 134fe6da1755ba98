// SPDX-License-Identifier: Apache-2.0
// The body attacks of the HTTP servers' trial on vigil-fleet's httplib server: chunked bodies
// and an over-long Content-Length (the connection attacks, on both servers:
// server_attack_test.cc), and the body rules per route.
#include "httpd/guarded_server.h"

#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "base/wait_for.h"
#include "httpd/http_attack.h"

namespace vigil {
namespace {

using namespace http_attack;

class GuardedServerTest : public ::testing::Test {
 protected:
  void Start(HttpLimits limits) {
    server_ = std::make_unique<GuardedServer>(std::move(limits), nullptr);
    server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    server_->Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      bodies_ += req.body.size();
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
    StatusOr<int> port = server_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }

  std::unique_ptr<GuardedServer> server_;
  int port_ = 0;
  std::atomic<size_t> bodies_{0};
};

TEST_F(GuardedServerTest, ChunkedBodiesAreRefusedUnread) {
  Start({.max_body_bytes = 1 << 20});
  const int64_t rss0 = VmRssBytes();
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  const std::string chunk = "100000\r\n" + std::string(1 << 20, 'x') + "\r\n";
  SendSome(fd, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk);
  const std::string reply = ReadUntilClose(fd, 3000);
  EXPECT_EQ(StatusOf(reply), 411) << reply;
  // The rest of 256 MiB of chunks (httplib appended them all to the request body) finds the
  // connection closed.
  size_t sent = 0;
  for (int i = 0; i < 255; ++i) {
    const size_t n = SendSome(fd, chunk, 500);
    sent += n;
    if (n < chunk.size()) break;
  }
  ::close(fd);
  EXPECT_LT(sent, size_t{64} << 20);
  EXPECT_EQ(bodies_, 0u);
  EXPECT_LT(VmRssBytes() - rss0, 64 << 20);
}

TEST_F(GuardedServerTest, ALongContentLengthIs413BeforeTheBodyIsRead) {
  Start({.max_body_bytes = 1 << 20});
  const int64_t t0 = MonotonicNanos();
  // Only the head is sent: an answer means the server did not wait for (or skip) the body.
  EXPECT_EQ(Exchange(port_, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4294967296\r\n\r\n"),
            413);
  EXPECT_LT(MonotonicNanos() - t0, 2 * kNanosPerSecond);
  EXPECT_EQ(Exchange(port_, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"), 200);
  EXPECT_EQ(bodies_, 3u);
}

TEST(CheckBodyTest, EncodingsAndBodiesPerRule) {
  auto check = [](BodyRule rule, const char* length, const char* encoding) {
    httplib::Request req;
    httplib::Response res;
    if (length != nullptr) req.set_header("Content-Length", length);
    if (encoding != nullptr) req.set_header("Content-Encoding", encoding);
    return CheckBody(req, res, rule) ? 0 : res.status;
  };
  EXPECT_EQ(check(BodyRule::kNone, nullptr, nullptr), 0);
  EXPECT_EQ(check(BodyRule::kNone, "0", nullptr), 0);
  EXPECT_EQ(check(BodyRule::kNone, "5", nullptr), 413);
  EXPECT_EQ(check(BodyRule::kNone, nullptr, "gzip"), 415);
  EXPECT_EQ(check(BodyRule::kIdentity, "5", "gzip"), 415);
  EXPECT_EQ(check(BodyRule::kGzip, "5", "br"), 415);
  EXPECT_EQ(check(BodyRule::kGzip, "5", "deflate"), 415);
  EXPECT_EQ(check(BodyRule::kGzip, "5", "GZIP"), 0);
}

}  // namespace
}  // namespace vigil
