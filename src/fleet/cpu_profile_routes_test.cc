// SPDX-License-Identifier: Apache-2.0
#include "fleet/cpu_profile_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/gzip.h"
#include "base/time_util.h"
#include "fleet/cpu_profile_store.h"
#include "fleet/fleet_server_fixture.h"
#include "fleet/fleet_test_util.h"

namespace vigil {
namespace {

using nlohmann::json;
constexpr int64_t kSec = 1000000000;
constexpr char kTokens[] = "h1 tok1\nh2 tok2\n@operator optok\n";

std::string ErrorOf(const httplib::Result& r) {
  const json body = json::parse(r->body, nullptr, false);
  return body.is_object() && body.contains("error") ? body["error"].get<std::string>() : "";
}

class CpuProfileRoutesTest : public fleet_test::FleetServerFixture {
 protected:
  void Start(const std::string& tokens = kTokens) {
    FleetServerOptions o;
    o.cpu_profiles_per_job_host = 3;
    StartServer(o, tokens);
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
  httplib::Result Upload(const std::string& query, const std::string& body,
                         const std::string& token, bool gzip = true) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    if (gzip) h.emplace("Content-Encoding", "gzip");
    return client_->Post("/api/v1/cpu-profiles" + query, h, gzip ? Gzip(body) : body, "text/plain");
  }
  static std::string Query(const std::string& host, const std::string& job, int64_t start_s) {
    return "?job_id=" + job + "&host=" + host + "&start_ns=" + std::to_string(start_s * kSec) +
           "&end_ns=" + std::to_string((start_s + 60) * kSec) + "&frequency_hz=19";
  }
  httplib::Result Get(const std::string& path, const std::string& token = "optok") {
    return client_->Get(path, {{"Authorization", "Bearer " + token}});
  }
};

TEST_F(CpuProfileRoutesTest, UploadedWindowsAreListedServedAndMergedAcrossHosts) {
  Start();
  PushJob("h1", "J1");
  PushJob("h2", "J1");
  const int64_t t0 = UnixNanos() / kSec - 600;
  auto r = Upload(Query("h1", "J1", t0), "train;main;matmul 30\ntrain;main;load 10\n", "tok1");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json stored = json::parse(r->body);
  EXPECT_EQ(stored["samples"], 40);
  EXPECT_EQ(stored["stacks"], 2);
  EXPECT_EQ(stored["duplicate"], false);
  // Plain text works too; the resend of a window is acknowledged as a duplicate.
  r = Upload(Query("h2", "J1", t0), "train;main;matmul 5\ntrain;main;allreduce 15\n", "tok2",
             false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  r = Upload(Query("h2", "J1", t0), "train;main;matmul 5\ntrain;main;allreduce 15\n", "tok2");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["duplicate"], true);

  auto list = Get("/api/v1/cpu-profiles?job_id=J1", "tok1");  // Any known token reads.
  ASSERT_EQ(list->status, 200) << list->body;
  const json profiles = json::parse(list->body)["profiles"];
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(Get("/api/v1/cpu-profiles")->status, 400);  // job_id is required.

  const std::string one = "/api/v1/cpu-profiles/" + std::to_string(stored["id"].get<int64_t>());
  auto folded = Get(one + "?format=folded");
  ASSERT_EQ(folded->status, 200);
  EXPECT_EQ(folded->body, "train;main;load 10\ntrain;main;matmul 30\n");
  auto pprof = Get(one + "?format=pprof");
  ASSERT_EQ(pprof->status, 200);
  EXPECT_EQ(pprof->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_TRUE(IsGzip(pprof->body));
  EXPECT_EQ(Get(one + "?format=svg")->status, 400);
  EXPECT_EQ(Get("/api/v1/cpu-profiles/424242")->status, 404);

  // Merged: matmul 30 + 5, load 10, allreduce 15 over both hosts.
  auto merged = Get("/api/v1/jobs/J1/cpu-profile?since=1d");
  ASSERT_EQ(merged->status, 200) << merged->body;
  const json m = json::parse(merged->body);
  EXPECT_EQ(m["samples"], 60);
  EXPECT_EQ(m["profiles"], 2);
  EXPECT_EQ(m["frequency_hz"], 19);
  ASSERT_EQ(m["hosts"].size(), 2u);
  ASSERT_GE(m["top"].size(), 3u);
  EXPECT_EQ(m["top"][0],
            json({{"function", "matmul"}, {"module", ""}, {"self", 35}, {"total", 35}}));
  EXPECT_EQ(m["top"][1]["function"], "allreduce");
  EXPECT_EQ(m["top"][1]["self"], 15);
  EXPECT_EQ(Get("/api/v1/jobs/J1/cpu-profile?format=folded&host=h2")->body,
            "train;main;allreduce 15\ntrain;main;matmul 5\n");
  EXPECT_EQ(Get("/api/v1/jobs/J1/cpu-profile?format=folded&by_host=1")->body,
            "h1;train;main;load 10\nh1;train;main;matmul 30\n"
            "h2;train;main;allreduce 15\nh2;train;main;matmul 5\n");
  auto html = Get("/api/v1/jobs/J1/cpu-profile?format=html");
  ASSERT_EQ(html->status, 200);
  EXPECT_EQ(html->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(html->body.find("<!DOCTYPE html>"), std::string::npos);
  EXPECT_NE(html->body.find("vigil-fleet: job J1, 2 hosts"), std::string::npos);
  EXPECT_NE(html->body.find("\"matmul\""), std::string::npos);
  auto none = Get("/api/v1/jobs/J9/cpu-profile");  // The job page asks for every job.
  ASSERT_EQ(none->status, 200);
  EXPECT_EQ(json::parse(none->body)["profiles"], 0);
  EXPECT_EQ(json::parse(none->body)["top"], json::array());
  EXPECT_EQ(Get("/api/v1/jobs/J9/cpu-profile?format=folded")->status, 404);
  EXPECT_EQ(Get("/api/v1/jobs/J9/cpu-profile?format=html")->status, 404);
  EXPECT_EQ(Get("/api/v1/jobs/J1/cpu-profile?since=junk")->status, 400);
}

TEST_F(CpuProfileRoutesTest, UploadsNeedTheirHostsTokenAndAJobOfThatHost) {
  Start();
  PushJob("h1", "J1");
  PushJob("h2", "J2");
  const std::string body = "p;f 1\n";
  auto no_token = Upload(Query("h1", "J1", 1000), body, "");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 401);
  auto unknown = Upload(Query("h1", "J1", 1000), body, "nope");
  EXPECT_EQ(unknown->status, 403);
  EXPECT_EQ(ErrorOf(unknown), "bad token");
  auto other_host = Upload(Query("h1", "J1", 1000), body, "tok2");
  EXPECT_EQ(other_host->status, 403);
  EXPECT_NE(ErrorOf(other_host).find("bad token for host h1"), std::string::npos)
      << other_host->body;
  auto other_job = Upload(Query("h1", "J2", 1000), body, "tok1");  // J2 runs on h2 only.
  EXPECT_EQ(other_job->status, 403);
  EXPECT_NE(ErrorOf(other_job).find("J2"), std::string::npos) << other_job->body;
  auto op = Upload(Query("h9", "J7", 1000), body, "optok");  // Operators write any.
  EXPECT_EQ(op->status, 200) << op->body;
  auto list = Get("/api/v1/cpu-profiles?job_id=J1");
  EXPECT_EQ(json::parse(list->body)["profiles"].size(), 0u);
}

TEST_F(CpuProfileRoutesTest, MalformedAndOversizeUploadsAreRefused) {
  Start();
  PushJob("h1", "J1");
  auto missing = Upload("?job_id=J1&host=h1&start_ns=1", "p;f 1\n", "tok1");
  EXPECT_EQ(missing->status, 400);
  EXPECT_NE(ErrorOf(missing).find("end_ns"), std::string::npos) << missing->body;
  EXPECT_EQ(Upload("?host=h1&start_ns=1&end_ns=2&frequency_hz=1", "p;f 1\n", "tok1")->status, 400);
  auto bad_line = Upload(Query("h1", "J1", 1000), "p;f 1\np;g many\n", "tok1");
  EXPECT_EQ(bad_line->status, 400);
  EXPECT_NE(ErrorOf(bad_line).find("line 2"), std::string::npos) << bad_line->body;
  auto bad_gzip =
      Upload(Query("h1", "J1", 1000), std::string("\x1f\x8bnot gzip", 10), "tok1", false);
  EXPECT_EQ(bad_gzip->status / 100, 4) << bad_gzip->body;
  auto bad_window =
      Upload("?job_id=J1&host=h1&start_ns=2000&end_ns=1000&frequency_hz=19", "p;f 1\n", "tok1");
  EXPECT_EQ(bad_window->status, 400);
  // Over the cap as sent, and a small gzip that inflates past the folded cap.
  auto big = Upload(Query("h1", "J1", 1000), std::string(kMaxCpuProfileUploadBytes + 1, 'x'),
                    "tok1", false);
  EXPECT_EQ(big->status, 413) << big->body;
  auto bomb =
      Upload(Query("h1", "J1", 1000), std::string(kMaxCpuProfileFoldedBytes + 1, 'a'), "tok1");
  EXPECT_EQ(bomb->status, 413) << bomb->body;
  EXPECT_EQ(json::parse(Get("/api/v1/cpu-profiles?job_id=J1")->body)["profiles"].size(), 0u);
}

TEST_F(CpuProfileRoutesTest, KeepsTheConfiguredWindowsPerJobAndHost) {
  Start();
  PushJob("h1", "J1");
  const int64_t t0 = UnixNanos() / kSec - 3600;
  for (int i = 0; i < 5; ++i) {
    auto r = Upload(Query("h1", "J1", t0 + 60 * i), "p;f " + std::to_string(i + 1) + "\n", "tok1");
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body)["dropped"], i < 3 ? 0 : 1);
  }
  const json list = json::parse(Get("/api/v1/cpu-profiles?job_id=J1")->body);
  ASSERT_EQ(list["profiles"].size(), 3u);
  // The newest three windows: 5 + 4 + 3 samples.
  const json m = json::parse(Get("/api/v1/jobs/J1/cpu-profile")->body);
  EXPECT_EQ(m["samples"], 12);
}

}  // namespace
}  // namespace vigil
