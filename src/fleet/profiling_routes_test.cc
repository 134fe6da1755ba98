// SPDX-License-Identifier: Apache-2.0
// The profiling routes over HTTP: a daemon uploading a trace it took on its own (no request id)
// gets a request made for it, under its own host's token, and only for a job its host reported.
#include "fleet/profiling_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "fleet/fleet_server.h"
#include "fleet/profiling_service.h"
#include "fleet/profiling_test_util.h"

namespace vigil {
namespace {

using nlohmann::json;

TEST(ProfilingRoutesTest, ADaemonsOwnTraceIsAdoptedUnderItsHostToken) {
  fleet_test::LedgerFixture ledger;
  // Job 77 runs on node-a, job 88 (another team's) on node-b.
  ledger.Push({{"77", "node-a", "GPU-1", 0, {0.5}}, {"88", "node-b", "GPU-2", 0, {0.5}}}, 2, {});
  ASSERT_TRUE(WriteFileAtomic(ledger.dir() + "/tokens", "node-a tok-a\nnode-b tok-b\n").ok());
  ProfilingOptions po;
  po.mode = ProfilingMode::kManual;
  po.vigil_binary = std::string(VIGIL_BIN_DIR) + "/vigil";
  po.store_analysis = [](const AnalysisUpload&) -> StatusOr<int64_t> { return 1; };
  auto service = ProfilingService::Create(po, ledger.store());
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  FleetServerOptions fo;
  fo.port = 0;
  fo.token_file = ledger.dir() + "/tokens";
  fo.profiling = service->get();
  FleetServer server(fo, ledger.store());
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client("127.0.0.1", server.port());
  const std::string trace = *ReadSmallFile(
      std::string(VIGIL_TEST_DATA_DIR) + "/traces/nccl_sampled_rank-0.json.gz", 16 << 20);
  auto post = [&](const std::string& query, const std::string& token) {
    return client.Post("/api/v1/traces" + query, {{"Authorization", "Bearer " + token}}, trace,
                       "application/gzip");
  };
  const std::string own =
      "?origin=auto%3Aperiodic&reason=sample&expected=1&trace_id=tr-5&job_id=77&pid=12"
      "&host=node-a";

  auto other_host = post(own, "tok-b");
  ASSERT_TRUE(other_host);
  EXPECT_EQ(other_host->status, 403);
  auto no_identity =
      post("?origin=auto%3Aperiodic&expected=1&job_id=77&pid=12&host=node-a", "tok-a");
  ASSERT_TRUE(no_identity);
  EXPECT_EQ(no_identity->status, 400) << no_identity->body;
  auto neither = post("?trace_id=tr-5&job_id=77&pid=12&host=node-a", "tok-a");
  ASSERT_TRUE(neither);
  EXPECT_EQ(neither->status, 400);

  // The attack: node-a's token adopting its trace as an analysis of node-b's job, or of a job
  // no host reported. Refused, and no request is made for it.
  for (const char* job : {"88", "never-seen"}) {
    auto forged = post(
        "?origin=auto%3Aperiodic&reason=sample&expected=1&trace_id=tr-6&pid=12"
        "&host=node-a&job_id=" +
            std::string(job),
        "tok-a");
    ASSERT_TRUE(forged);
    EXPECT_EQ(forged->status, 403) << forged->body;
    EXPECT_NE(forged->body.find("never reported by host node-a"), std::string::npos)
        << forged->body;
  }
  EXPECT_FALSE((*service)->Get("daemon-node-a-tr-6").ok());

  auto ok = post(own, "tok-a");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 201) << ok->body;
  EXPECT_EQ(json::parse(ok->body)["request_id"], "daemon-node-a-tr-5");
  ASSERT_TRUE((*service)->WaitIdle(60'000'000'000));
  auto r = (*service)->Get("daemon-node-a-tr-5");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, "analysed") << r->error;
  EXPECT_EQ(r->job_id, "77");
  EXPECT_EQ(r->reason, "auto:periodic: sample");
  server.Stop();
  (*service)->Stop();
}

}  // namespace
}  // namespace vigil
