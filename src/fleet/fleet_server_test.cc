// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_server.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/gzip.h"
#include "base/time_util.h"
#include "fleet/fleet_server_fixture.h"
#include "fleet/fleet_test_util.h"

namespace vigil {
namespace {

using fleet_test::kSec;
using nlohmann::json;

std::string BatchJson(const std::string& host, const std::string& id, int64_t t0, int ticks,
                      const std::string& uuid = "G1") {
  json samples = json::array();
  for (int i = 0; i < ticks; ++i) {
    std::vector<IngestSample> s;
    fleet_test::AddGpuTick(&s, uuid, t0 + i * 10 * kSec, 0, 0.5,
                           {{.job_id = "J", .alloc_s = 10.0 * i, .busy_s = 5.0 * i}});
    for (const IngestSample& x : s) {
      json labels = json::object();
      for (const auto& [k, v] : x.labels) labels[k] = v;
      samples.push_back({{"name", x.name},
                         {"kind", x.counter ? "counter" : "gauge"},
                         {"labels", labels},
                         {"value", x.value},
                         {"time_ns", x.time_ns}});
    }
  }
  return json{{"host", host}, {"batch_id", id}, {"seq", 1}, {"samples", samples}}.dump();
}

class FleetServerTest : public fleet_test::FleetServerFixture {
 protected:
  void Start(const std::string& tokens = "") {
    FleetServerOptions o;
    o.price_per_gpu_hour = 3.0;
    o.max_body_bytes = 1 << 20;
    StartServer(o, tokens);
  }
  httplib::Result Post(const std::string& body, const std::string& token = "", bool gzip = true) {
    httplib::Headers h;
    if (gzip) h.emplace("Content-Encoding", "gzip");
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return client_->Post("/api/v1/ingest", h, gzip ? Gzip(body) : body, "application/json");
  }

  const int64_t t0_ = (UnixNanos() / kSec / 3600 * 3600 - 3600) * kSec;
};

TEST_F(FleetServerTest, IngestsGzipBatchesOnceAndReportsAttribution) {
  Start();
  auto r = Post(BatchJson("h1", "b1", t0_, 7));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["accepted"], true);
  auto dup = Post(BatchJson("h1", "b1", t0_, 7), "", false);
  ASSERT_TRUE(dup);
  EXPECT_EQ(json::parse(dup->body)["duplicate"], true);

  auto a = client_->Get("/api/v1/attribution?by=team&since=7d&bucket=1h");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, 200) << a->body;
  const json body = json::parse(a->body);
  ASSERT_EQ(body["rows"].size(), 1u) << body.dump(2);
  EXPECT_EQ(body["rows"][0]["key"], "team-a");
  EXPECT_NEAR(body["rows"][0]["allocated_gpu_hours"].get<double>() * 3600, 60.0, 1e-9);
  EXPECT_NEAR(body["totals"]["cost"].get<double>(), 60.0 / 3600 * 3.0, 1e-12);
  // Buckets start at since (7 days ago, to the minute), not on the hour.
  const int64_t since_s = body["since_s"].get<int64_t>();
  EXPECT_EQ(since_s % 60, 0);
  EXPECT_EQ(body["rows"][0]["bucket_start_s"], since_s + (t0_ / kSec - since_s) / 3600 * 3600);

  for (const char* path : {"/api/v1/jobs", "/api/v1/jobs/J", "/api/v1/hosts", "/api/v1/idle-now",
                           "/api/v1/top-wasters", "/healthz"}) {
    auto g = client_->Get(path);
    ASSERT_TRUE(g) << path;
    EXPECT_EQ(g->status, 200) << path << " " << g->body;
  }
}

TEST_F(FleetServerTest, ErrorsAreJson) {
  Start();
  auto bad = client_->Get("/api/v1/attribution?by=color");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(json::parse(bad->body, nullptr, false)["error"].get<std::string>().find("color"),
            std::string::npos);
  auto missing = client_->Get("/api/v1/jobs/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto junk = Post("{not json", "", false);
  ASSERT_TRUE(junk);
  EXPECT_EQ(junk->status, 400);
  auto big = Post(std::string(2 << 20, ' '), "", false);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

TEST_F(FleetServerTest, HostAndGpuPagesAnswerOverTheirWindow) {
  Start();
  auto r = Post(BatchJson("h1", "b1", t0_, 7));
  ASSERT_TRUE(r && r->status == 200);
  const std::string window = "since=" + std::to_string(t0_ / kSec) +
                             "&until=" + std::to_string(t0_ / kSec + 3600) + "&step=5m";
  auto host = client_->Get("/api/v1/hosts/h1?" + window);
  ASSERT_TRUE(host);
  ASSERT_EQ(host->status, 200) << host->body;
  const json h = json::parse(host->body);
  EXPECT_EQ(h["step_s"], 300);
  EXPECT_EQ(h["until_s"].get<int64_t>() - h["since_s"].get<int64_t>(), 3600);
  ASSERT_EQ(h["gpus"].size(), 1u);
  EXPECT_EQ(h["jobs"][0]["job_id"], "J");
  auto gpu = client_->Get("/api/v1/hosts/h1/gpus/G1?" + window);
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->status, 200) << gpu->body;
  for (const char* path : {"/api/v1/hosts/nope", "/api/v1/hosts/h1/gpus/G9"}) {
    auto missing = client_->Get(path);
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404) << path << " " << missing->body;
  }
  auto bad = client_->Get("/api/v1/hosts/h1?step=90s");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
}

// MIG devices of drivers before R470 are named "MIG-GPU-<uuid>/<gi>/<ci>": the dashboard encodes
// the slashes (%2F), the server decodes the path before routing, and the page must still answer.
TEST_F(FleetServerTest, GpuPageAnswersForAUuidWithSlashes) {
  Start();
  const std::string uuid = "MIG-GPU-5b3e8f1a/1/0";
  auto r = Post(BatchJson("h1", "b1", t0_, 7, uuid));
  ASSERT_TRUE(r && r->status == 200);
  const std::string window =
      "?since=" + std::to_string(t0_ / kSec) + "&until=" + std::to_string(t0_ / kSec + 3600);
  auto gpu = client_->Get("/api/v1/hosts/h1/gpus/MIG-GPU-5b3e8f1a%2F1%2F0" + window);
  ASSERT_TRUE(gpu);
  ASSERT_EQ(gpu->status, 200) << gpu->body;
  const json g = json::parse(gpu->body);
  ASSERT_EQ(g["gpus"].size(), 1u) << g.dump();
  EXPECT_EQ(g["gpus"][0]["gpu_uuid"], uuid);
  auto other = client_->Get("/api/v1/hosts/h1/gpus/MIG-GPU-5b3e8f1a%2F2%2F0" + window);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404) << other->body;
}

TEST_F(FleetServerTest, PerHostTokensAreEnforced) {
  Start("# host token\nh1 secret-1\nh2 secret-2\n");
  auto none = Post(BatchJson("h1", "b1", t0_, 2));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  auto wrong_host = Post(BatchJson("h1", "b1", t0_, 2), "secret-2");
  ASSERT_TRUE(wrong_host);
  EXPECT_EQ(wrong_host->status, 403);
  auto ok = Post(BatchJson("h1", "b1", t0_, 2), "secret-1");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto read = client_->Get("/api/v1/hosts", {{"Authorization", "Bearer secret-2"}});
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200);
  EXPECT_EQ(client_->Get("/api/v1/hosts")->status, 401);
}

TEST_F(FleetServerTest, OnlyOperatorTokensAskForProfiling) {
  Start("h1 secret-1\n* any-host\n@operator op-1\n");
  auto ask = [&](const std::string& token) {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto res =
        client_->Post("/api/v1/profiling", headers, R"({"job_id": "J"})", "application/json");
    return res ? res->status : 0;
  };
  EXPECT_EQ(ask(""), 401);
  EXPECT_EQ(ask("nobody"), 403);
  EXPECT_EQ(ask("secret-1"), 403);
  EXPECT_EQ(ask("any-host"), 403);
  EXPECT_EQ(ask("op-1"), 404);  // Past the guard: profiling is off in this server.
  auto why = client_->Post("/api/v1/profiling", {{"Authorization", "Bearer any-host"}}, "{}",
                           "application/json");
  ASSERT_TRUE(why);
  EXPECT_NE(why->body.find("@operator TOKEN"), std::string::npos) << why->body;
  // Operators read everything but push as no host.
  EXPECT_EQ(client_->Get("/api/v1/hosts", {{"Authorization", "Bearer op-1"}})->status, 200);
  EXPECT_EQ(Post(BatchJson("h1", "b1", t0_, 2), "op-1")->status, 403);
}

TEST_F(FleetServerTest, ASecondServerOnThePortFailsAndTheBacklogTakesABurst) {
  Start();
  FleetServerOptions o;
  o.port = server_->port();
  FleetServer second(o, store_.get());
  EXPECT_EQ(second.Start().code(), StatusCode::kUnavailable);  // No SO_REUSEPORT sharing.
  // The listening socket's backlog (ss shows it as Send-Q) is 1024, not httplib's 5.
  FILE* ss = popen(
      ("ss -ltnH 'sport = :" + std::to_string(server_->port()) + "' 2>/dev/null").c_str(), "r");
  ASSERT_NE(ss, nullptr);
  char line[512] = {};
  const bool got = fgets(line, sizeof(line), ss) != nullptr;
  pclose(ss);
  if (!got) GTEST_SKIP() << "ss (iproute2) is not installed";
  char state[32];
  long recv_q = 0, send_q = 0;
  ASSERT_EQ(sscanf(line, "%31s %ld %ld", state, &recv_q, &send_q), 3) << line;
  EXPECT_EQ(send_q, 1024) << line;
}

TEST(FleetTokenFileTest, UnknownRolesAreRefused) {
  const std::string path = ::testing::TempDir() + "/vigil-roles";
  std::ofstream(path) << "@admin tok\n";
  StatusOr<std::multimap<std::string, std::string>> t = ReadTokenFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("unknown role @admin"), std::string::npos);
  std::ofstream(path) << "@operator tok\nh1 t1\n";
  EXPECT_TRUE(ReadTokenFile(path).ok());
}

TEST_F(FleetServerTest, BrowsersGetGzipNotBrotli) {
  // httplib's brotli runs at quality 11: seconds for the dashboard's larger replies.
  Start();
  ASSERT_EQ(Post(BatchJson("h1", "b1", t0_, 7))->status, 200);
  client_->set_decompress(false);
  auto res = client_->Get("/api/v1/attribution?by=host&since=1d",
                          {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip");
  auto plain = client_->Get("/api/v1/attribution?by=host&since=1d", {{"Accept-Encoding", "br"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->get_header_value("Content-Encoding"), "");
  EXPECT_TRUE(json::accept(plain->body)) << plain->body.substr(0, 100);
}

}  // namespace
}  // namespace vigil
