// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_server.h"

#include <atomic>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>

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
