// SPDX-License-Identifier: Apache-2.0
// vigild end to end: /metrics, /api/v1, /healthz and the control RPC over TCP and the unix
// socket, against one daemon started for the whole suite.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/time_util.h"
#include "httpd/http_attack.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

class VigildApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    daemon_ = new VigildProcess();
    ASSERT_TRUE(daemon_->Spawn({"--interval", "1s", "--log-level", "debug"}));
    ASSERT_TRUE(daemon_->WaitHealthy()) << daemon_->Log();
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }

  static nlohmann::json GetJson(const std::string& path, int want_status = 200) {
    HttpReply reply = daemon_->Get(path);
    EXPECT_EQ(reply.status, want_status) << path << ": " << reply.body;
    EXPECT_EQ(reply.content_type, "application/json") << path;
    auto doc = nlohmann::json::parse(reply.body, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << reply.body;
    return doc;
  }

  static nlohmann::json Call(const std::string& target, const nlohmann::json& request) {
    auto client = RpcClient::Connect(target, 5 * kNanosPerSecond);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) {
      return nullptr;
    }
    auto reply = client->Call(request, 10 * kNanosPerSecond);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? *reply : nlohmann::json();
  }

  static VigildProcess* daemon_;
};

VigildProcess* VigildApiTest::daemon_ = nullptr;

TEST_F(VigildApiTest, MetricsHasCollectorSuccessForEveryCollector) {
  HttpReply reply = daemon_->Get("/metrics");
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(reply.body.find("# TYPE vigil_collector_success gauge"), std::string::npos);
  EXPECT_NE(reply.body.find("vigil_collector_success{collector=\"daemon_self\"} 1"),
            std::string::npos);
  // The control RPC address others reach this daemon at (vigil-fleet records it per host).
  EXPECT_NE(reply.body.find("vigil_daemon_info{rpc_address=\"" + daemon_->rpc_target() +
                            "\",version=\"0.1.0\"} 1"),
            std::string::npos)
      << reply.body.substr(0, 4000);
  auto status = GetJson("/api/v1/status");
  for (const auto& c : status["collectors"]) {
    if (c["state"] == "disabled") {
      continue;
    }
    const std::string line =
        "vigil_collector_success{collector=\"" + c["name"].get<std::string>() + "\"} ";
    EXPECT_NE(reply.body.find(line), std::string::npos) << line;
  }
}

TEST_F(VigildApiTest, MetricsPassesPromtool) {
  if (!PathExists("/usr/bin/promtool")) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
  HttpReply reply = daemon_->Get("/metrics");
  ASSERT_EQ(reply.status, 200);
  const std::string path = daemon_->dir() + "/metrics.txt";
  ASSERT_TRUE(WriteFileAtomic(path, reply.body).ok());
  const std::string cmd = "/usr/bin/promtool check metrics < " + path + " > " + path + ".lint 2>&1";
  const int rc = system(cmd.c_str());
  EXPECT_EQ(rc, 0) << ReadSmallFile(path + ".lint").value_or("");
}

TEST_F(VigildApiTest, LatestReturnsSeriesWithLabelsAndOnePoint) {
  auto doc =
      GetJson("/api/v1/latest?selector=vigil_collector_success%7Bcollector%3D%22daemon_self%22%7D");
  ASSERT_EQ(doc["series"].size(), 1u) << doc.dump();
  const auto& s = doc["series"][0];
  EXPECT_EQ(s["name"], "vigil_collector_success");
  EXPECT_EQ(s["kind"], "gauge");
  EXPECT_EQ(s["labels"]["collector"], "daemon_self");
  ASSERT_EQ(s["points"].size(), 1u);
  EXPECT_EQ(s["points"][0][1], 1.0);
  EXPECT_GT(s["points"][0][0].get<int64_t>(), UnixNanos() - 3600 * kNanosPerSecond);
}

TEST_F(VigildApiTest, RangeReturnsPointsInTheWindow) {
  // Wait (bounded) for a few one-second ticks so the range has more than one point.
  const int64_t deadline = MonotonicNanos() + 30 * kNanosPerSecond;
  nlohmann::json doc;
  while (MonotonicNanos() < deadline) {
    doc = GetJson("/api/v1/range?selector=vigil_daemon_info&start=-5m");
    if (doc["series"].size() == 1 && doc["series"][0]["points"].size() >= 2) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(doc["series"].size(), 1u) << doc.dump();
  const auto& points = doc["series"][0]["points"];
  ASSERT_GE(points.size(), 2u);
  EXPECT_LT(points[0][0].get<int64_t>(), points[1][0].get<int64_t>());

  auto empty = GetJson("/api/v1/range?selector=vigil_daemon_info&start=1000&end=2000");
  EXPECT_TRUE(empty["series"].empty() || empty["series"][0]["points"].empty()) << empty.dump();
}

TEST_F(VigildApiTest, BadQueriesAre400JsonErrors) {
  auto bad_selector = GetJson("/api/v1/latest?selector=%7Bbroken", 400);
  EXPECT_TRUE(bad_selector.contains("error"));
  auto bad_time = GetJson("/api/v1/range?selector=x&start=last+tuesday", 400);
  EXPECT_TRUE(bad_time.contains("error"));
  EXPECT_EQ(daemon_->Get("/healthz").status, 200);
}

TEST_F(VigildApiTest, StatusHasTheDocumentedShape) {
  auto s = GetJson("/api/v1/status");
  EXPECT_EQ(s["version"], "0.1.0");
  EXPECT_FALSE(s["hostname"].get<std::string>().empty());
  EXPECT_GT(s["pid"].get<int>(), 0);
  EXPECT_GE(s["uptime_s"].get<double>(), 0);
  EXPECT_TRUE(s["reduced_features"].is_array());
  EXPECT_GT(s["store"]["series"].get<int>(), 0);
  EXPECT_EQ(s["endpoints"]["http"], "127.0.0.1:" + std::to_string(daemon_->http_port()));
  EXPECT_EQ(s["endpoints"]["rpc"], daemon_->rpc_target());
  EXPECT_EQ(s["endpoints"]["unix"], daemon_->unix_socket());
  ASSERT_FALSE(s["collectors"].empty());
  for (const auto& c : s["collectors"]) {
    for (const char* key :
         {"name", "state", "message", "interval_s", "last_run_unix_ns", "duration_s", "samples"}) {
      EXPECT_TRUE(c.contains(key)) << key << " in " << c.dump();
    }
  }
}

// The trial's HTTP attacks on the running daemon (root on a real host): a local user's slow
// connections, which stopped the API with four, and a chunked gzip bomb, which took it to
// 1,113 MiB. The scrape is still answered at once and the daemon's memory stays put.
TEST_F(VigildApiTest, SlowClientsAndAGzipBombDoNotStopTheApi) {
  using namespace http_attack;
  const int64_t rss0 = VmRssBytes(daemon_->pid());
  ASSERT_GT(rss0, 0);
  int stop = -1, ready = -1;
  const int dribblers = geteuid() == 0 ? 24 : 6;  // As uid 65534 when root: capped per uid.
  const pid_t child = StartDribblers(daemon_->http_port(), dribblers, 100,
                                     geteuid() == 0 ? 65534 : -1, &stop, &ready);
  ASSERT_GT(child, 0);
  char c;
  for (int i = 0; i < dribblers; ++i) ASSERT_EQ(::read(ready, &c, 1), 1);

  const std::string bomb = GzipOfZeros(size_t{1} << 30);
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", bomb.size());
  const int status = Exchange(daemon_->http_port(),
                              "POST /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
                              "Content-Encoding: gzip\r\n\r\n" +
                                  std::string(size) + bomb + "\r\n0\r\n\r\n");
  EXPECT_GE(status, 400);
  EXPECT_LT(status, 500);

  const int64_t t0 = MonotonicNanos();
  EXPECT_EQ(Exchange(daemon_->http_port(), "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"), 200);
  EXPECT_LT(MonotonicNanos() - t0, kNanosPerSecond);
  EXPECT_LT(VmRssBytes(daemon_->pid()) - rss0, int64_t{128} << 20);
  ::close(stop);
  ::close(ready);
  waitpid(child, nullptr, 0);
}

TEST_F(VigildApiTest, RpcOverTcpAnswersDynologAndVigilMethods) {
  const std::string target = daemon_->rpc_target();
  EXPECT_EQ(Call(target, {{"fn", "getStatus"}}), (nlohmann::json{{"status", 1}}));
  EXPECT_EQ(Call(target, {{"fn", "getVersion"}}), (nlohmann::json{{"version", "0.1.0"}}));
  auto status = Call(target, {{"fn", "vigilStatus"}});
  EXPECT_EQ(status["version"], "0.1.0");
  EXPECT_TRUE(status["collectors"].is_array());
  auto latest = Call(target, {{"fn", "vigilLatest"}, {"selector", "vigil_daemon_info"}});
  ASSERT_EQ(latest["series"].size(), 1u) << latest.dump();
  EXPECT_EQ(latest["series"][0]["labels"]["version"], "0.1.0");
  auto range = Call(target, {{"fn", "vigilRange"},
                             {"selector", "vigil_daemon_info"},
                             {"start_ns", UnixNanos() - 600 * kNanosPerSecond},
                             {"end_ns", UnixNanos()},
                             {"step_ns", 0}});
  ASSERT_EQ(range["series"].size(), 1u) << range.dump();
  auto procs = Call(target, {{"fn", "vigilProcesses"}});
  EXPECT_TRUE(procs["processes"].is_array()) << procs.dump();
  auto bad = Call(target, {{"fn", "vigilLatest"}, {"selector", "x{"}});
  EXPECT_TRUE(bad.contains("error"));
}

TEST_F(VigildApiTest, RpcOverTheUnixSocketAnswersToo) {
  const std::string target = "unix:" + daemon_->unix_socket();
  EXPECT_EQ(Call(target, {{"fn", "getStatus"}}), (nlohmann::json{{"status", 1}}));
  EXPECT_EQ(Call(target, {{"fn", "getVersion"}}), (nlohmann::json{{"version", "0.1.0"}}));
  EXPECT_EQ(Call(target, {{"fn", "vigilStatus"}})["pid"], GetJson("/api/v1/status")["pid"]);
  auto latest = Call(target, {{"fn", "vigilLatest"}, {"selector", "vigil_collector_success"}});
  EXPECT_FALSE(latest["series"].empty());
}

}  // namespace
}  // namespace vigil::testing
