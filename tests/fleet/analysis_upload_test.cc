// SPDX-License-Identifier: Apache-2.0
// `vigil analyze TRACE --upload URL` against the built vigil-fleet: the report the service stores
// is the one `vigil analyze --json` writes; the job id comes from --job-id or the trace's
// metadata; an operator's token uploads for any job, a host's only for the jobs that host
// reported; bad tokens, missing job ids and an unreachable service are reported with their exit
// codes; with --independent each file's report goes to its own job.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "fleet_process.h"

namespace vigil {
namespace {

using fleet_test::FleetProcess;
using nlohmann::json;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while (gz && (n = gzread(gz, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  if (gz) gzclose(gz);
  return out;
}

class AnalysisUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vigil_ = std::string(VIGIL_BIN_DIR) + "/vigil";
    if (access(vigil_.c_str(), X_OK) != 0) GTEST_SKIP() << "vigil CLI not built";
    dir_ = std::filesystem::temp_directory_path() / ("vigil-anup-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    hostname_ = name;
    std::ofstream(dir_ / "tokens") << "@operator upload-token\n" << hostname_ << " host-token\n";
    std::ofstream(dir_ / "client-token") << "upload-token\n";
    std::ofstream(dir_ / "host-token") << "host-token\n";
    fleet_ = std::make_unique<FleetProcess>(
        (dir_ / "fleet.db").string(), fleet_test::FreePort(),
        std::vector<std::string>{"--token-file", (dir_ / "tokens").string()});
    ASSERT_TRUE(fleet_->Start());
  }
  void TearDown() override {
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }
  json Get(const std::string& path) {
    httplib::Client c(fleet_->url());
    auto r = c.Get(path, {{"Authorization", "Bearer upload-token"}});
    EXPECT_TRUE(r && r->status == 200) << path << (r ? r->body : "");
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  int Analyze(std::vector<std::string> args, std::string* out) {
    args.insert(args.begin(), {vigil_, "analyze"});
    return fleet_test::RunCapture(args, out);
  }

  std::string vigil_;
  std::string hostname_;  // What the CLI sends as host=.
  std::filesystem::path dir_;
  std::unique_ptr<FleetProcess> fleet_;
  const std::string traces_ = std::string(VIGIL_TEST_DATA_DIR) + "/traces/";
};

TEST_F(AnalysisUploadTest, UploadStoresTheReportAnalyzeWrites) {
  const std::string trace = traces_ + "nccl_sampled_rank-0.json.gz";
  const std::string local = (dir_ / "local.json").string();
  std::string out;
  ASSERT_EQ(Analyze({trace, "-q", "--json", local}, &out), 0);
  ASSERT_EQ(Analyze({trace, "-q", "--upload", fleet_->url(), "--job-id", "J1", "--reason",
                     "nightly", "--token-file", (dir_ / "client-token").string()},
                    &out),
            0);
  EXPECT_NE(out.find("Uploaded to " + fleet_->url() + " as analysis 1 of job J1"),
            std::string::npos)
      << out;
  const json list = Get("/api/v1/analyses?job_id=J1");
  ASSERT_EQ(list["analyses"].size(), 1u) << list.dump();
  const json& a = list["analyses"][0];
  EXPECT_EQ(a["reason"], "nightly");
  EXPECT_EQ(a["source"], "upload");
  EXPECT_EQ(a["trace_path"], trace);
  EXPECT_FALSE(a["host"].get<std::string>().empty());
  const json one = Get("/api/v1/analyses/" + std::to_string(a["id"].get<int64_t>()));
  EXPECT_EQ(one["report"], json::parse(Slurp(local)));
}

TEST_F(AnalysisUploadTest, JobIdComesFromTheTraceMetadataElseIsRequired) {
  std::string out;
  EXPECT_EQ(Analyze({traces_ + "h100_bert_small.json.gz", "-q", "--upload", fleet_->url(),
                     "--token-file", (dir_ / "client-token").string()},
                    &out),
            2);  // No job_id in this trace and none given.
  EXPECT_TRUE(Get("/api/v1/analyses")["analyses"].empty());

  // The same trace with the metadata PyTorch's profiler writes for _add_metadata_json.
  std::string text = Gunzip(traces_ + "h100_bert_small.json.gz");
  ASSERT_EQ(text.substr(0, 1), "{");
  text.insert(1, "\"job_id\": \"meta-42\", ");
  const std::string tagged = (dir_ / "tagged.json").string();
  std::ofstream(tagged) << text;
  ASSERT_EQ(Analyze({tagged, "-q", "--upload", fleet_->url(), "--fleet-token-file",
                     (dir_ / "client-token").string()},
                    &out),
            0)
      << out;
  EXPECT_EQ(Get("/api/v1/analyses?job_id=meta-42")["analyses"].size(), 1u);
}

// --independent: each file's report goes to the job in that file's metadata, on its own.
TEST_F(AnalysisUploadTest, IndependentUploadsEachFileToItsOwnJob) {
  const std::string text = Gunzip(traces_ + "h100_bert_small.json.gz");
  ASSERT_EQ(text.substr(0, 1), "{");
  std::vector<std::string> files;
  for (const std::string job : {"meta-1", "meta-2"}) {
    files.push_back((dir_ / (job + ".json")).string());
    std::ofstream(files.back()) << "{\"job_id\": \"" << job << "\", " << text.substr(1);
  }
  const std::string token = (dir_ / "client-token").string();
  std::string out;
  ASSERT_EQ(Analyze({"-q", "--independent", files[0], files[1], "--upload", fleet_->url(),
                     "--token-file", token},
                    &out),
            0)
      << out;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string job = "meta-" + std::to_string(i + 1);
    EXPECT_NE(out.find("as analysis " + std::to_string(i + 1) + " of job " + job),
              std::string::npos)
        << out;
    const json list = Get("/api/v1/analyses?job_id=" + job)["analyses"];
    ASSERT_EQ(list.size(), 1u) << job;
    EXPECT_EQ(list[0]["trace_path"], files[i]);
  }
  // --job-id names one job; a file without metadata is refused before anything is sent.
  EXPECT_EQ(Analyze({"-q", "--independent", files[0], files[1], "--upload", fleet_->url(),
                     "--job-id", "J", "--token-file", token},
                    &out),
            2);
  EXPECT_EQ(Analyze({"-q", "--independent", files[0], traces_ + "h100_bert_small.json.gz",
                     "--upload", fleet_->url(), "--token-file", token},
                    &out),
            2);
  EXPECT_EQ(Get("/api/v1/analyses")["analyses"].size(), 2u);
}

TEST_F(AnalysisUploadTest, RefusedTokenAndUnreachableServiceAreFailures) {
  const std::string trace = traces_ + "amd_mi250_minitoy.json.gz";
  std::string out;
  EXPECT_EQ(Analyze({trace, "-q", "--upload", fleet_->url(), "--job-id", "J"}, &out), 1);
  std::ofstream(dir_ / "bad-token") << "nope\n";
  EXPECT_EQ(Analyze({trace, "-q", "--upload", fleet_->url(), "--job-id", "J", "--token-file",
                     (dir_ / "bad-token").string()},
                    &out),
            1);
  EXPECT_TRUE(Get("/api/v1/analyses")["analyses"].empty());
  EXPECT_EQ(Analyze({trace, "-q", "--job-id", "J", "--upload",
                     "http://127.0.0.1:" + std::to_string(fleet_test::FreePort())},
                    &out),
            3);
  EXPECT_EQ(Analyze({trace, "-q", "--job-id", "J"}, &out), 2);  // --job-id without --upload.
}

// With this host's token (not an operator's) the CLI uploads analyses of the jobs this host
// reported to the ledger, and of no other job.
TEST_F(AnalysisUploadTest, AHostTokenUploadsOnlyThisHostsJobs) {
  const int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  const json batch = {{"host", hostname_},
                      {"batch_id", "b1"},
                      {"samples",
                       {{{"name", "vigil_gpu_allocated_seconds_total"},
                         {"kind", "counter"},
                         {"labels", {{"gpu_uuid", "GPU-1"}, {"job_id", "here-1"}}},
                         {"value", 1},
                         {"time_ns", t}}}}};
  httplib::Client c(fleet_->url());
  auto pushed = c.Post("/api/v1/ingest", {{"Authorization", "Bearer host-token"}}, batch.dump(),
                       "application/json");
  ASSERT_TRUE(pushed && pushed->status == 200) << (pushed ? pushed->body : "");
  const std::string trace = traces_ + "amd_mi250_minitoy.json.gz";
  const std::string token = (dir_ / "host-token").string();
  std::string out;
  EXPECT_EQ(Analyze({trace, "-q", "--upload", fleet_->url(), "--job-id", "elsewhere",
                     "--token-file", token},
                    &out),
            1);
  EXPECT_TRUE(Get("/api/v1/analyses")["analyses"].empty());
  ASSERT_EQ(
      Analyze({trace, "-q", "--upload", fleet_->url(), "--job-id", "here-1", "--token-file", token},
              &out),
      0)
      << out;
  const json list = Get("/api/v1/analyses?job_id=here-1")["analyses"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["host"], hostname_);
}

}  // namespace
}  // namespace vigil
