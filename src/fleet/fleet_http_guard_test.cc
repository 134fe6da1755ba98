// SPDX-License-Identifier: Apache-2.0
// The attack trial's HTTP findings against vigil-fleet: a body behind a bad token, a gzip bomb,
// chunked bodies, encodings the routes do not take, dribbling clients, and time parameters that
// overflow.
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/fleet_server.h"
#include "fleet/fleet_server_fixture.h"
#include "httpd/http_attack.h"

namespace vigil {
namespace {

using namespace http_attack;

class FleetHttpGuardTest : public fleet_test::FleetServerFixture {
 protected:
  void Start(const std::string& tokens, size_t max_inflated = 64 << 20) {
    FleetServerOptions o;
    o.max_body_bytes = 8 << 20;
    o.max_inflated_bytes = max_inflated;
    StartServer(o, tokens);
    port_ = server_->port();
  }
  std::string Head(const std::string& request_line, const std::string& headers) const {
    return request_line + " HTTP/1.1\r\nHost: fleet\r\n" + headers + "\r\n";
  }
  int port_ = 0;
};

// The fleet parsed a batch before it checked the token: now the token goes first, from the head.
TEST_F(FleetHttpGuardTest, ABadTokenIsRefusedBeforeTheBodyIsRead) {
  Start("h1 tok-1\n");
  const std::string body_start(64 << 10, '{');
  for (const auto& [auth, want] :
       {std::pair<std::string, int>{"Authorization: Bearer wrong\r\n", 403}, {"", 401}}) {
    const int fd = Connect(port_);
    ASSERT_GE(fd, 0);
    const int64_t t0 = MonotonicNanos();
    // 4 MiB announced, 64 KiB sent: an answer now means the rest was never waited for.
    SendSome(fd, Head("POST /api/v1/ingest", auth + "Content-Type: application/json\r\n"
                                                    "Content-Length: 4194304\r\n") +
                     body_start);
    const std::string reply = ReadUntilClose(fd, 3000);
    ::close(fd);
    EXPECT_EQ(StatusOf(reply), want) << reply;
    EXPECT_LT(MonotonicNanos() - t0, 2 * kNanosPerSecond);
  }
}

// httplib inflated "Content-Encoding: gzip" into memory, unbounded, before any handler: a 3 GiB
// bomb threw bad_alloc. The route inflates it itself now, with the ingest cap.
TEST_F(FleetHttpGuardTest, AGzipBombIsRefusedAndMemoryStaysBounded) {
  Start("h1 tok-1\n", /*max_inflated=*/1 << 20);
  const std::string bomb = GzipOfZeros(size_t{1} << 30);
  ASSERT_LT(bomb.size(), size_t{4} << 20);
  const int64_t rss0 = VmRssBytes();
  const int status = Exchange(port_,
                              Head("POST /api/v1/ingest",
                                   "Authorization: Bearer tok-1\r\nContent-Encoding: gzip\r\n"
                                   "Content-Type: application/json\r\nContent-Length: " +
                                       std::to_string(bomb.size()) + "\r\n") +
                                  bomb,
                              10'000);
  EXPECT_EQ(status, 413);
  EXPECT_LT(VmRssBytes() - rss0, int64_t{128} << 20);
}

TEST_F(FleetHttpGuardTest, ChunkedBodiesAreRefused) {
  Start("h1 tok-1\n");
  EXPECT_EQ(Exchange(port_, Head("POST /api/v1/ingest",
                                 "Authorization: Bearer tok-1\r\nTransfer-Encoding: chunked\r\n") +
                                "100000\r\n" + std::string(1 << 20, '{') + "\r\n"),
            411);
}

TEST_F(FleetHttpGuardTest, EncodingsARouteDoesNotTakeAre415) {
  Start("h1 tok-1\n");
  const std::string auth = "Authorization: Bearer tok-1\r\n";
  EXPECT_EQ(Exchange(port_, Head("POST /api/v1/ingest", auth + "Content-Encoding: br\r\n"
                                                               "Content-Length: 2\r\n") +
                                "{}"),
            415);
  EXPECT_EQ(Exchange(port_, Head("POST /api/v1/traces?host=h1", auth + "Content-Encoding: gzip\r\n"
                                                                       "Content-Length: 2\r\n") +
                                "{}"),
            415);
  EXPECT_EQ(Exchange(port_, Head("GET /api/v1/hosts", auth + "Content-Encoding: gzip\r\n")), 415);
  EXPECT_EQ(Exchange(port_, Head("GET /api/v1/hosts", auth + "Content-Length: 4\r\n") + "abcd"),
            413);
  EXPECT_EQ(Exchange(port_, Head("GET /api/v1/hosts", auth)), 200);
}

// 8 dribbling connections held all of httplib's 8 threads.
TEST_F(FleetHttpGuardTest, DribblingClientsDoNotStarveANormalOne) {
  Start("");
  int stop = -1, ready = -1;
  const pid_t child = StartDribblers(port_, 24, 100, -1, &stop, &ready);
  ASSERT_GT(child, 0);
  char c;
  for (int i = 0; i < 24; ++i) ASSERT_EQ(::read(ready, &c, 1), 1);
  const int64_t t0 = MonotonicNanos();
  EXPECT_EQ(Exchange(port_, Head("GET /api/v1/hosts", "")), 200);
  EXPECT_LT(MonotonicNanos() - t0, 1 * kNanosPerSecond);
  ::close(stop);
  ::close(ready);
  waitpid(child, nullptr, 0);
}

// 20 digits did not fit int64 (an empty optional was dereferenced); 11 overflowed as nanoseconds.
TEST_F(FleetHttpGuardTest, OverlongUnixTimesAre400) {
  Start("");
  for (const char* since : {"123456789012345678901234", "99999999999999999999", "12345678901"}) {
    EXPECT_EQ(Exchange(port_, Head(std::string("GET /api/v1/jobs?since=") + since, "")), 400)
        << since;
  }
  EXPECT_EQ(Exchange(port_, Head("GET /api/v1/jobs?since=1764410994", "")), 200);
  EXPECT_EQ(Exchange(port_, Head("GET /api/v1/jobs?since=100000d", "")), 200);
}

}  // namespace
}  // namespace vigil
