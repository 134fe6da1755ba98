// SPDX-License-Identifier: Apache-2.0
// A stolen host token against the built vigil-fleet over loopback: writing MFU for another team's
// job, storing analyses of jobs its host never ran (naming its own host, or no host), adopting a
// trace as an analysis of such a job, and flooding the ledger with made-up series or oversized
// labels. Each is refused (or, for job gauges, dropped) while the same token's real pushes and
// uploads, the other hosts' and an operator's go through.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "fleet_process.h"

namespace vigil {
namespace {

using fleet_test::FleetProcess;
using nlohmann::json;

constexpr int64_t kSec = 1000000000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json Sample(const std::string& name, bool counter, json labels, double value, int64_t t) {
  return json{{"name", name},
              {"kind", counter ? "counter" : "gauge"},
              {"labels", std::move(labels)},
              {"value", value},
              {"time_ns", t}};
}

// One GPU's report as vigild pushes it: heartbeat, device energy and per job its four counters.
void AddGpu(json* samples, const std::string& uuid, int64_t t, double total,
            const std::vector<std::string>& jobs) {
  const json gpu = {{"gpu_uuid", uuid}, {"gpu_model", "H100"}};
  samples->push_back(Sample("vigil_gpu_up", false, gpu, 1, t));
  samples->push_back(Sample("vigil_gpu_energy_joules_total", true, gpu, total * 300, t));
  for (const std::string& job : jobs) {
    const json l = {{"gpu_uuid", uuid}, {"job_id", job},   {"team", "team-of-" + job},
                    {"user", "u"},      {"rule", "slurm"}, {"model", "m"}};
    for (const char* name :
         {"vigil_gpu_allocated_seconds_total", "vigil_gpu_busy_seconds_total",
          "vigil_gpu_held_idle_seconds_total", "vigil_job_gpu_energy_joules_total"}) {
      samples->push_back(Sample(name, true, l, total, t));
    }
  }
}

class FleetHostTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vigil-hosttok-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "tokens") << "node-a tok-a\nnode-b tok-b\n* tok-any\n@operator tok-op\n";
    fleet_ = std::make_unique<FleetProcess>(
        (dir_ / "fleet.db").string(), fleet_test::FreePort(),
        std::vector<std::string>{"--token-file", (dir_ / "tokens").string(), "--profiling",
                                 "manual", "--profiling-trace-dir", (dir_ / "traces").string(),
                                 "--max-series-per-host", "100"});
    ASSERT_TRUE(fleet_->Start());
    client_ = std::make_unique<httplib::Client>(fleet_->url());
    client_->set_read_timeout(std::chrono::seconds(60));  // A loaded machine under ASan.
    t0_ = NowNs() - 120 * kSec;
  }
  void TearDown() override {
    client_.reset();
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }
  httplib::Headers Auth(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }
  httplib::Result Push(const std::string& host, const std::string& token, json samples) {
    const json batch = {{"host", host},
                        {"batch_id", host + "-" + std::to_string(++seq_)},
                        {"seq", seq_},
                        {"samples", std::move(samples)}};
    return client_->Post("/api/v1/ingest", Auth(token), batch.dump(), "application/json");
  }
  // A host's tick: one GPU with `jobs`, plus the MFU its training processes report.
  void PushOwn(const std::string& host, const std::string& token, int tick,
               const std::vector<std::string>& jobs, double mfu) {
    json s = json::array();
    const int64_t t = t0_ + tick * 60 * kSec;
    AddGpu(&s, "GPU-" + host, t, 60.0 * tick, jobs);
    for (const std::string& job : jobs) {
      s.push_back(Sample("vigil_job_mfu_ratio", false, {{"job_id", job}}, mfu, t));
    }
    auto r = Push(host, token, s);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  json Get(const std::string& path, int want = 200) {
    auto r = client_->Get(path, Auth("tok-op"));
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, want) << path << " " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  httplib::Result UploadAnalysis(const std::string& query, const std::string& token) {
    std::ifstream in(std::string(VIGIL_TEST_DATA_DIR) + "/analyses/h100_bert_small.json");
    const std::string report((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    return client_->Post("/api/v1/analyses" + query, Auth(token), report, "application/json");
  }
  httplib::Result UploadTrace(const std::string& query, const std::string& token) {
    std::ifstream in(std::string(VIGIL_TEST_DATA_DIR) + "/traces/nccl_sampled_rank-0.json.gz",
                     std::ios::binary);
    const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return client_->Post("/api/v1/traces" + query, Auth(token), gz, "application/gzip");
  }

  std::filesystem::path dir_;
  std::unique_ptr<FleetProcess> fleet_;
  std::unique_ptr<httplib::Client> client_;
  int64_t t0_ = 0;
  int seq_ = 0;
};

TEST_F(FleetHostTokenTest, AHostTokenWritesOnlyAboutJobsItsHostReported) {
  for (int tick = 0; tick < 3; ++tick) {
    PushOwn("node-a", "tok-a", tick, {"job-a"}, 0.4);
    PushOwn("node-b", "tok-b", tick, {"job-b"}, 0.5);
  }

  // 1. MFU and model FLOPs pushed for node-b's job under node-a's token: taken as a batch (its
  //    other samples are node-a's own) but not counted for the job.
  json forged = json::array();
  for (const char* name : {"vigil_job_mfu_ratio", "vigil_job_model_flops"}) {
    forged.push_back(Sample(name, false, {{"job_id", "job-b"}}, 1e300, t0_ + 150 * kSec));
  }
  auto gauges = Push("node-a", "tok-a", forged);
  ASSERT_TRUE(gauges);
  EXPECT_EQ(gauges->status, 200) << gauges->body;
  EXPECT_EQ(json::parse(gauges->body)["used"], 0) << gauges->body;
  const json job_b = Get("/api/v1/jobs/job-b");
  EXPECT_DOUBLE_EQ(job_b["mfu_ratio"].get<double>(), 0.5) << job_b.dump(2);
  EXPECT_TRUE(job_b["model_flops_per_step"].is_null()) << job_b.dump(2);
  EXPECT_DOUBLE_EQ(Get("/api/v1/jobs/job-a")["mfu_ratio"].get<double>(), 0.4);

  // 2. Analyses of node-b's job under node-a's (or a "*") token, with or without a host.
  for (const auto& [query, token] :
       std::vector<std::pair<std::string, std::string>>{{"?job_id=job-b", "tok-a"},
                                                        {"?job_id=job-b&host=node-a", "tok-a"},
                                                        {"?job_id=job-b", "tok-any"},
                                                        {"?job_id=job-b&host=node-a", "tok-any"},
                                                        {"?job_id=job-b&host=node-b", "tok-a"}}) {
    for (int i = 0; i < 3; ++i) {
      auto r = UploadAnalysis(query, token);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 403) << query << " " << token << ": " << r->body;
    }
  }
  EXPECT_TRUE(Get("/api/v1/analyses?job_id=job-b")["analyses"].empty());

  // 3. A trace adopted as an analysis of node-b's job (the daemon's own-trace upload).
  auto trace = UploadTrace(
      "?origin=auto%3Aperiodic&reason=x&expected=1&trace_id=tr-1&pid=7&host=node-a&job_id=job-b",
      "tok-a");
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->status, 403) << trace->body;
  EXPECT_NE(trace->body.find("never reported by host node-a"), std::string::npos) << trace->body;
  Get("/api/v1/profiling/daemon-node-a-tr-1", 404);

  // What each host may do with its own jobs, and an operator with any.
  auto own = UploadAnalysis("?job_id=job-a&host=node-a", "tok-a");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  auto any = UploadAnalysis("?job_id=job-b", "tok-op");
  ASSERT_TRUE(any);
  EXPECT_EQ(any->status, 200) << any->body;
  auto own_trace = UploadTrace(
      "?origin=auto%3Aperiodic&reason=x&expected=1&trace_id=tr-2&pid=7&host=node-a&job_id=job-a",
      "tok-a");
  ASSERT_TRUE(own_trace);
  EXPECT_EQ(own_trace->status, 201) << own_trace->body;
  EXPECT_EQ(Get("/api/v1/profiling/daemon-node-a-tr-2")["job_id"], "job-a");
  const json b_list = Get("/api/v1/analyses?job_id=job-b")["analyses"];
  ASSERT_EQ(b_list.size(), 1u) << b_list.dump(2);
  EXPECT_EQ(b_list[0]["host"], "");  // The operator's, not node-a's.
}

TEST_F(FleetHostTokenTest, SeriesAndLabelFloodsAreRefusedNamingTheLimit) {
  std::vector<std::string> jobs;
  for (int i = 0; i < 10; ++i) jobs.push_back("real-" + std::to_string(i));
  PushOwn("node-a", "tok-a", 0, jobs, 0.3);  // 2 + 40 series of the limit's 100.

  // The attack: one token inventing 1000 jobs (4000 series) in one batch.
  std::vector<std::string> fake;
  for (int i = 0; i < 1000; ++i) fake.push_back("fake-" + std::to_string(i));
  json flood = json::array();
  AddGpu(&flood, "GPU-node-a", t0_ + 60 * kSec, 60, fake);
  auto r = Push("node-a", "tok-a", flood);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  const json refusal = json::parse(r->body, nullptr, false);
  EXPECT_EQ(refusal["limit"], "max-series-per-host") << r->body;
  EXPECT_NE(refusal["error"].get<std::string>().find("--max-series-per-host=100"),
            std::string::npos)
      << r->body;
  Get("/api/v1/jobs/fake-0", 404);  // Nothing of the batch was stored.
  Get("/api/v1/jobs/fake-999", 404);

  // Oversized labels, each refused naming its limit.
  struct Case {
    json labels;
    const char* limit;
  };
  json many = {{"gpu_uuid", "GPU-node-a"}};
  for (int i = 0; i < 40; ++i) many["l" + std::to_string(i)] = "v";
  const std::vector<Case> cases = {
      {many, "max-labels-per-series"},
      {{{"gpu_uuid", "GPU-node-a"}, {std::string(300, 'n'), "v"}}, "max-label-name-bytes"},
      {{{"gpu_uuid", "GPU-node-a"}, {"job_id", std::string(100000, 'j')}},
       "max-label-value-bytes"}};
  for (const Case& c : cases) {
    auto big = Push("node-a", "tok-a",
                    json::array({Sample("vigil_gpu_allocated_seconds_total", true, c.labels, 1,
                                        t0_ + 60 * kSec)}));
    ASSERT_TRUE(big);
    EXPECT_EQ(big->status, 400) << big->body;
    EXPECT_EQ(json::parse(big->body, nullptr, false)["limit"], c.limit) << big->body;
  }

  // The host's real pushes go on, and another host is not limited by node-a's flood.
  PushOwn("node-a", "tok-a", 1, jobs, 0.3);
  EXPECT_GT(Get("/api/v1/jobs/real-9")["gpu_hours"].get<double>(), 0);
  PushOwn("node-b", "tok-b", 0, {"b-0", "b-1"}, 0.3);
}

}  // namespace
}  // namespace vigil
