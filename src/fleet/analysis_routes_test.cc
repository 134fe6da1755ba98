// SPDX-License-Identifier: Apache-2.0
#include "fleet/analysis_routes.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/gzip.h"
#include "base/time_util.h"
#include "fleet/fleet_server_fixture.h"
#include "fleet/fleet_test_util.h"

namespace vigil {
namespace {

using nlohmann::json;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(VIGIL_TEST_DATA_DIR) + "/analyses/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ErrorOf(const httplib::Result& r) {
  const json body = json::parse(r->body, nullptr, false);
  return body.is_object() && body.contains("error") ? body["error"].get<std::string>() : "";
}

class AnalysisRoutesTest : public fleet_test::FleetServerFixture {
 protected:
  void Start(const std::string& tokens = "", size_t max_inflated = 1 << 20) {
    FleetServerOptions o;
    o.max_body_bytes = 1 << 20;
    o.max_inflated_bytes = max_inflated;
    StartServer(o, tokens);
  }
  httplib::Result Upload(const std::string& query, const std::string& body, bool gzip = false,
                         const std::string& token = "") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return client_->Post("/api/v1/analyses" + query, h, gzip ? Gzip(body) : body,
                         "application/json");
  }
  // `host` reports `job` on one of its GPUs, as its daemon would.
  void PushJob(const std::string& host, const std::string& job) {
    std::vector<IngestSample> s;
    fleet_test::AddGpuTick(&s, "GPU-" + host, UnixNanos(), 10, 0.5,
                           {{.job_id = job, .alloc_s = 5, .busy_s = 5}});
    auto r =
        store_->Ingest(fleet_test::MakeBatch(host, host + "-" + job, 1, std::move(s)), UnixNanos());
    ASSERT_TRUE(r.ok() && !r->refused) << r.status().ToString();
  }
  json Get(const std::string& path) {
    auto r = client_->Get(path);
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << path << " " << r->body;
    return json::parse(r->body, nullptr, false);
  }
};

TEST_F(AnalysisRoutesTest, UploadedReportIsListedAggregatedAndServedWhole) {
  Start();
  const std::string report = Fixture("nccl_sampled_rank-0.json");
  ASSERT_FALSE(report.empty());
  auto r = Upload("?job_id=J7&host=h1&reason=nightly", report, /*gzip=*/true);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const int64_t id = json::parse(r->body)["id"].get<int64_t>();
  auto r2 = Upload("?job_id=J8", Fixture("h100_bert_small.json"));
  ASSERT_TRUE(r2);
  ASSERT_EQ(r2->status, 200) << r2->body;

  const json list = Get("/api/v1/analyses?job_id=J7");
  ASSERT_EQ(list["analyses"].size(), 1u) << list.dump();
  EXPECT_EQ(list["analyses"][0]["id"], id);
  EXPECT_EQ(list["analyses"][0]["host"], "h1");
  EXPECT_EQ(list["analyses"][0]["reason"], "nightly");
  EXPECT_EQ(list["analyses"][0]["source"], "upload");
  EXPECT_EQ(Get("/api/v1/analyses?limit=10")["analyses"].size(), 2u);

  const json one = Get("/api/v1/analyses/" + std::to_string(id));
  EXPECT_EQ(one["report"], json::parse(report));
  EXPECT_EQ(one["insights"][0]["id"], "exposed_communication");

  const json w = Get("/api/v1/workflows?since=1d");
  EXPECT_EQ(w["analyses"], 2);
  EXPECT_EQ(w["jobs"], 2);
  EXPECT_GT(w["shares"]["compute"].get<double>(), 0);
  bool low_util = false;
  for (const json& i : w["insights"]) {
    if (i["id"] == "low_gpu_utilization") low_util = i["jobs"] == 2;
  }
  EXPECT_TRUE(low_util) << w["insights"].dump(2);

  auto missing = client_->Get("/api/v1/analyses/999");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(AnalysisRoutesTest, BadUploadsAreClear400s) {
  Start();
  auto junk = Upload("?job_id=J", "{not json");
  ASSERT_TRUE(junk);
  EXPECT_EQ(junk->status, 400);
  EXPECT_NE(ErrorOf(junk).find("not valid JSON"), std::string::npos) << junk->body;
  auto schema = Upload("?job_id=J", R"({"schema":2,"ranks":[]})");
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->status, 400);
  EXPECT_NE(ErrorOf(schema).find("schema 2"), std::string::npos) << schema->body;
  auto no_ranks = Upload("?job_id=J", R"({"schema":1})");
  ASSERT_TRUE(no_ranks);
  EXPECT_EQ(no_ranks->status, 400);
  EXPECT_NE(ErrorOf(no_ranks).find("ranks"), std::string::npos) << no_ranks->body;
  auto no_job = Upload("", R"({"schema":1,"ranks":[]})");
  ASSERT_TRUE(no_job);
  EXPECT_EQ(no_job->status, 400);
  EXPECT_NE(ErrorOf(no_job).find("job_id"), std::string::npos) << no_job->body;
  auto corrupt = Upload("?job_id=J", std::string("\x1f\x8b garbage", 10));
  ASSERT_TRUE(corrupt);
  EXPECT_EQ(corrupt->status, 400);
  EXPECT_TRUE(Get("/api/v1/analyses")["analyses"].empty());
}

TEST_F(AnalysisRoutesTest, ReportsAboveTheCapAre413EvenWhenGzipped) {
  Start("", /*max_inflated=*/64 << 10);
  const std::string report = Fixture("nccl_sampled_rank-0.json");  // ~60 KB: fits.
  auto ok = Upload("?job_id=J", report, true);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  // 200 KB of JSON compresses to a few KB but inflates past the cap.
  json big = json::parse(report);
  big["padding"] = std::string(200 << 10, 'x');
  auto gz = Upload("?job_id=J", big.dump(), true);
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->status, 413) << gz->body;
  auto plain = Upload("?job_id=J", big.dump(), false);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 413) << plain->body;
  // Above the server's body limit (1 MiB) httplib itself refuses it.
  auto huge = Upload("?job_id=J", std::string(2 << 20, ' '));
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
}

TEST_F(AnalysisRoutesTest, TokensAreRequiredWhenATokenFileIsSet) {
  Start("h1 secret-1\n@operator admin\n");
  PushJob("h1", "J");
  const std::string report = Fixture("h100_bert_small.json");
  auto none = Upload("?job_id=J&host=h1", report);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  auto other_host = Upload("?job_id=J&host=h2", report, false, "secret-1");
  ASSERT_TRUE(other_host);
  EXPECT_EQ(other_host->status, 403);
  auto ok = Upload("?job_id=J&host=h1", report, false, "secret-1");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto any = Upload("?job_id=J", report, false, "admin");
  ASSERT_TRUE(any);
  EXPECT_EQ(any->status, 200) << any->body;
  for (const char* path : {"/api/v1/analyses", "/api/v1/analyses/1", "/api/v1/workflows"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << path;
    auto authed = client_->Get(path, {{"Authorization", "Bearer admin"}});
    ASSERT_TRUE(authed);
    EXPECT_EQ(authed->status, 200) << path << " " << authed->body;
  }
}

// The attack: a host's token (or a "*" one) storing analyses of jobs its host never ran, by
// naming its own host or no host at all. Refused; an operator token may.
TEST_F(AnalysisRoutesTest, AHostTokenStoresAnalysesOnlyOfJobsItsHostReported) {
  Start("h1 secret-1\nh2 secret-2\n* any-host\n@operator admin\n");
  PushJob("h1", "own-job");
  PushJob("h2", "other-teams-job");
  const std::string report = Fixture("h100_bert_small.json");
  for (const auto& [query, token] : std::vector<std::pair<std::string, std::string>>{
           {"?job_id=other-teams-job&host=h1", "secret-1"},
           {"?job_id=other-teams-job", "secret-1"},
           {"?job_id=other-teams-job", "any-host"},
           {"?job_id=other-teams-job&host=h1", "any-host"},
           {"?job_id=never-seen&host=h2", "secret-2"}}) {
    auto r = Upload(query, report, false, token);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << query << " " << token << " " << r->body;
    EXPECT_FALSE(ErrorOf(r).empty()) << r->body;
  }
  auto no_host = Upload("?job_id=other-teams-job", report, false, "secret-1");
  EXPECT_NE(ErrorOf(no_host).find("needs an operator token"), std::string::npos) << no_host->body;
  auto named = Upload("?job_id=other-teams-job&host=h1", report, false, "secret-1");
  EXPECT_NE(ErrorOf(named).find("never reported by host h1"), std::string::npos) << named->body;
  auto list = client_->Get("/api/v1/analyses", {{"Authorization", "Bearer admin"}});
  ASSERT_TRUE(list);
  EXPECT_TRUE(json::parse(list->body)["analyses"].empty()) << list->body;

  // What is allowed: each host its own jobs ("*" naming the host), and an operator any job.
  for (const auto& [query, token] : std::vector<std::pair<std::string, std::string>>{
           {"?job_id=own-job&host=h1", "secret-1"},
           {"?job_id=other-teams-job&host=h2", "secret-2"},
           {"?job_id=other-teams-job&host=h2", "any-host"},
           {"?job_id=never-seen", "admin"}}) {
    auto r = Upload(query, report, false, token);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << query << " " << token << " " << r->body;
  }
}

}  // namespace
}  // namespace vigil
