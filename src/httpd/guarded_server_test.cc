// SPDX-License-Identifier: Apache-2.0
// The attacks of the HTTP servers' trial, on the shared layer: dribbling clients, an endless
// request head, chunked bodies, over-long Content-Length, and per-client connection caps.
#include "httpd/guarded_server.h"

#include <signal.h>
#include <sys/wait.h>
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
  void TearDown() override {
    for (int fd : {stop_fd_, ready_fd_}) {
      if (fd >= 0) ::close(fd);
    }
    if (child_ > 0) waitpid(child_, nullptr, 0);
  }
  // Starts `n` dribbling connections and waits until they are all open.
  void Dribble(int n, int uid) {
    child_ = StartDribblers(port_, n, 100, uid, &stop_fd_, &ready_fd_);
    ASSERT_GT(child_, 0);
    char c;
    for (int i = 0; i < n; ++i) ASSERT_EQ(::read(ready_fd_, &c, 1), 1) << "dribbler " << i;
  }
  // A normal GET's status and how long it took.
  int TimedGet(int64_t* ms) {
    const int64_t t0 = MonotonicNanos();
    const int status = Exchange(port_, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
    *ms = (MonotonicNanos() - t0) / kNanosPerMilli;
    return status;
  }

  std::unique_ptr<GuardedServer> server_;
  int port_ = 0;
  std::atomic<size_t> bodies_{0};
  pid_t child_ = -1;
  int stop_fd_ = -1, ready_fd_ = -1;
};

// httplib's pool had 4 (vigild) or 8 (vigil-fleet) threads: 12 dribblers held them all.
TEST_F(GuardedServerTest, DribblingClientsDoNotStarveANormalOne) {
  Start({.max_connections = 64, .max_connections_per_client = 16});
  Dribble(12, -1);
  int64_t ms = 0;
  EXPECT_EQ(TimedGet(&ms), 200);
  EXPECT_LT(ms, 1000);
}

// Every local user connects from 127.0.0.1: the cap is per uid, so uid 65534 holding its share
// leaves root's scrape room.
TEST_F(GuardedServerTest, OneUsersConnectionsAreCappedAndOthersAreStillServed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  Start({.max_connections = 32, .max_connections_per_client = 8});
  Dribble(40, 65534);
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() <= 8; }, 5));
  int64_t ms = 0;
  EXPECT_EQ(TimedGet(&ms), 200);
  EXPECT_LT(ms, 1000);
}

// A byte every 100 ms restarted httplib's per-read timeout forever; the deadline is for the
// whole head.
TEST_F(GuardedServerTest, ADribbledHeadIsCutOffAtTheRequestDeadline) {
  Start({.request_deadline_ms = 1000});
  Dribble(3, -1);
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }, 4));
}

// A request line without a newline grew httplib's line buffer without bound.
TEST_F(GuardedServerTest, AnEndlessHeadIsCutOffAtTheHeadCap) {
  Start({.max_head_bytes = 16 << 10});
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  const std::string line = "GET /" + std::string(8 << 20, 'a');
  const size_t sent = SendSome(fd, line, 3000);
  ReadUntilClose(fd, 3000);
  ::close(fd);
  EXPECT_LT(sent, line.size()) << "the server read the whole 8 MiB line";
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }, 3));
}

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
