// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_server.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>

#include "base/time_util.h"
#include "daemon/landing_page.h"
#include "httpd/http_attack.h"

namespace vigil {
namespace {

struct Calls {
  std::atomic<int64_t> start{0}, end{0}, step{0};
  std::atomic<bool> healthy{true};
};

HttpApi MakeApi(Calls* calls) {
  HttpApi api;
  api.metrics_text = [] { return std::string("vigil_daemon_info{version=\"0.1.0\"} 1\n"); };
  api.latest = [](const std::string& selector) -> StatusOr<nlohmann::json> {
    if (selector == "bad{") {
      return InvalidArgumentError("bad selector");
    }
    return nlohmann::json{{"series", nlohmann::json::array()}, {"selector", selector}};
  };
  api.range = [calls](const std::string&, int64_t start, int64_t end,
                      int64_t step) -> StatusOr<nlohmann::json> {
    calls->start = start;
    calls->end = end;
    calls->step = step;
    return nlohmann::json{{"series", nlohmann::json::array()}};
  };
  api.status = [] { return nlohmann::json{{"version", "0.1.0"}}; };
  api.health = [calls] {
    return calls->healthy ? OkStatus() : UnavailableError("starting: first collection not done");
  };
  return api;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(HttpServerOptions{.port = 0}, MakeApi(&calls_));
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  Calls calls_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpServerTest, MetricsUsesThePrometheusTextContentType) {
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(res->body, "vigil_daemon_info{version=\"0.1.0\"} 1\n");
}

TEST_F(HttpServerTest, HealthzIs503WithTheReasonWhenUnhealthy) {
  auto ok = client_->Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok\n");
  calls_.healthy = false;
  auto bad = client_->Get("/healthz");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 503);
  EXPECT_NE(bad->body.find("first collection"), std::string::npos);
}

TEST_F(HttpServerTest, LatestPassesTheSelectorAndReportsBadOnesAs400) {
  auto res =
      client_->Get("/api/v1/latest?selector=vigil_host_cpu_seconds_total%7Bcpu%3D%220%22%7D");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  auto doc = nlohmann::json::parse(res->body, nullptr, false);
  EXPECT_EQ(doc["selector"], "vigil_host_cpu_seconds_total{cpu=\"0\"}");

  auto bad = client_->Get("/api/v1/latest?selector=bad%7B");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(nlohmann::json::parse(bad->body, nullptr, false)["error"], "bad selector");
}

TEST_F(HttpServerTest, RangeParsesTimesAndSteps) {
  auto res =
      client_->Get("/api/v1/range?selector=x&start=1764410994&end=2025-11-29T10:19:54Z&step=1m");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(calls_.start, 1764410994LL * 1000000000);
  EXPECT_EQ(calls_.end, (1764410994LL + 600) * 1000000000);
  EXPECT_EQ(calls_.step, 60LL * 1000000000);

  auto rel = client_->Get("/api/v1/range?selector=x&start=-5m");
  ASSERT_TRUE(rel);
  EXPECT_EQ(rel->status, 200);
  EXPECT_EQ(calls_.end - calls_.start, 300LL * 1000000000);
}

TEST_F(HttpServerTest, TheRootIsALandingPageThatLinksWhatIsServed) {
  auto res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  for (const char* link : {"href=\"/metrics\"", "href=\"/healthz\"", "href=\"/api/v1/status\""}) {
    EXPECT_NE(res->body.find(link), std::string::npos) << link << " in " << res->body;
  }
  // Each linked endpoint answers (the page names no route that does not exist).
  for (const char* path : {"/metrics", "/healthz", "/api/v1/status"}) {
    auto linked = client_->Get(path);
    ASSERT_TRUE(linked) << path;
    EXPECT_EQ(linked->status, 200) << path;
  }
  auto other = client_->Get("/index.html");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);  // Only the root itself is the page.
}

TEST(LandingPageTest, EscapesTheHostName) {
  const std::string page = LandingPageHtml("<script>x</script>");
  EXPECT_EQ(page.find("<script>"), std::string::npos);
  EXPECT_NE(page.find("vigild on &lt;script&gt;x&lt;/script&gt;"), std::string::npos);
}

TEST_F(HttpServerTest, BadParametersAndUnknownPathsAreJsonErrors) {
  auto bad_time = client_->Get("/api/v1/range?selector=x&start=yesterday");
  ASSERT_TRUE(bad_time);
  EXPECT_EQ(bad_time->status, 400);
  EXPECT_TRUE(nlohmann::json::parse(bad_time->body, nullptr, false).contains("error"));

  auto reversed = client_->Get("/api/v1/range?selector=x&start=200&end=100");
  ASSERT_TRUE(reversed);
  EXPECT_EQ(reversed->status, 400);

  auto missing = client_->Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("Content-Type"), "application/json");
}

// 20+ digits and offsets before 1970: a clear 400, never an overflow (UBSan).
TEST_F(HttpServerTest, OutOfRangeTimesAre400) {
  for (const char* q : {"start=123456789012345678901234", "end=99999999999999999999",
                        "start=-30000d", "start=-99999999999999999999s", "step=99999999999d"}) {
    auto res = client_->Get(std::string("/api/v1/range?selector=x&") + q);
    ASSERT_TRUE(res) << q;
    EXPECT_EQ(res->status, 400) << q;
  }
}

// The same work bound as vigilRange: a month of raw points, or a million steps, is refused.
TEST_F(HttpServerTest, RangeWorkIsBoundedAsOverRpc) {
  calls_.start = -1;
  for (const char* q : {"start=-30d", "start=-30d&step=1s"}) {
    auto res = client_->Get(std::string("/api/v1/range?selector=x&") + q);
    ASSERT_TRUE(res) << q;
    EXPECT_EQ(res->status, 400) << q;
    EXPECT_NE(res->body.find("step of at least"), std::string::npos) << res->body;
  }
  EXPECT_EQ(calls_.start, -1);  // The query never ran.
  auto fine = client_->Get("/api/v1/range?selector=x&start=-30d&step=5m");
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 200);
}

// vigild serves GET only: a method, a body, a Transfer-Encoding or a Content-Encoding is refused
// from the head, before a byte of any body is read.
TEST_F(HttpServerTest, BodiesAndEncodingsAreRefusedUnread) {
  using http_attack::Exchange;
  const int port = server_->port();
  const std::string host = " HTTP/1.1\r\nHost: a\r\n";
  EXPECT_EQ(Exchange(port, "POST /metrics" + host + "Content-Length: 2\r\n\r\n{}"), 405);
  EXPECT_EQ(Exchange(port, "GET /metrics" + host + "Content-Length: 5\r\n\r\nhello"), 413);
  EXPECT_EQ(Exchange(port, "GET /metrics" + host + "Content-Encoding: gzip\r\n\r\n"), 415);
  EXPECT_EQ(Exchange(port, "GET /metrics" + host + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            411);
  EXPECT_EQ(Exchange(port, "GET /metrics" + host + "\r\n"), 200);
}

// The trial's 1 MB gzip, sent chunked, took vigild (root) to 1,113 MiB: httplib read the chunks
// and inflated them before routing. It is refused from its head now.
TEST_F(HttpServerTest, AChunkedGzipBombIsRefusedAndMemoryStaysBounded) {
  using namespace http_attack;
  const std::string bomb = GzipOfZeros(size_t{1} << 30);
  const int64_t rss0 = VmRssBytes();
  const int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", bomb.size());
  SendSome(fd,
           "POST /api/v1/latest HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
           "Content-Encoding: gzip\r\n\r\n" +
               std::string(size) + bomb + "\r\n0\r\n\r\n");
  const std::string reply = ReadUntilClose(fd, 3000);
  ::close(fd);
  EXPECT_GE(StatusOf(reply), 400) << reply;
  EXPECT_LT(StatusOf(reply), 500) << reply;
  EXPECT_LT(VmRssBytes() - rss0, int64_t{128} << 20);
}

// Four dribbling connections held all four of httplib's threads.
TEST_F(HttpServerTest, DribblingClientsDoNotStarveAScrape) {
  int stop = -1, ready = -1;
  const pid_t child = http_attack::StartDribblers(server_->port(), 6, 100, -1, &stop, &ready);
  ASSERT_GT(child, 0);
  char c;
  for (int i = 0; i < 6; ++i) ASSERT_EQ(::read(ready, &c, 1), 1);
  const int64_t t0 = MonotonicNanos();
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(MonotonicNanos() - t0, kNanosPerSecond);
  ::close(stop);
  ::close(ready);
  waitpid(child, nullptr, 0);
}

TEST(HttpServerStartTest, BusyPortIsUnavailable) {
  Calls calls;
  HttpServer first(HttpServerOptions{.port = 0}, MakeApi(&calls));
  ASSERT_TRUE(first.Start().ok());
  HttpServer second(HttpServerOptions{.port = first.port()}, MakeApi(&calls));
  Status s = second.Start();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

}  // namespace
}  // namespace vigil
