// SPDX-License-Identifier: Apache-2.0
// `vigil analyze` with what a user gives it: several files and globs of one job's ranks; a folder
// or list that mixes traces of different jobs (refused with the reason, or each file on its own
// with --independent, then one report per file); outputs that cannot be written (refused before
// reading anything); and a threshold name that does not exist (the valid names listed). The
// multi-rank checks use the real traces of ../shared/traces and skip with a message when that
// folder is absent.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "vigil_run.h"

namespace vigil {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::RunResult;

const std::string kDataTraces = std::string(VIGIL_TEST_DATA_DIR) + "/traces";
const std::string kSharedTraces = std::string(VIGIL_SHARED_DIR) + "/traces";
// One DLRM step on 8 ranks (NCCL all_to_all and all_reduce).
const std::string kDlrm = kSharedTraces + "/param/et_replay/tests/inputs/dlrm_kineto";
// Four single-GPU inference runs of different models, side by side in one folder.
const std::string kH100Models = kSharedTraces + "/TraceLens/tests/traces/h100";

#define REQUIRE_SHARED(path) \
  if (!fs::exists(path)) GTEST_SKIP() << "shared trace set absent: " << (path)

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

class AnalyzeInputsTest : public ::testing::Test {
 protected:
  RunResult Analyze(const std::string& args) {
    return testing::RunProgram(dir_.path(), "analyze --progress never " + args);
  }
  testing::TempDir dir_;
};

TEST_F(AnalyzeInputsTest, AGlobOrSeveralFilesOfOneJobAreItsRanks) {
  REQUIRE_SHARED(kDlrm);
  // Quoted: vigil expands the glob itself.
  RunResult glob = Analyze("'" + kDlrm + "/worker*.pt.trace.json.gz'");
  ASSERT_EQ(glob.exit_code, 0) << glob.err;
  EXPECT_TRUE(Contains(glob.out, "vigil analyze: 8 rank(s)")) << glob.out;
  EXPECT_TRUE(Contains(glob.out, "Ranks (compute / communication / idle / mean step):"))
      << glob.out;
  // Expanded by the shell: a list of files; the same report as the folder.
  RunResult list = Analyze(kDlrm + "/worker*.pt.trace.json.gz");
  RunResult folder = Analyze(kDlrm);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_EQ(list.out, folder.out);
  RunResult two = Analyze(kDlrm + "/worker0_step_12.1694128201545.pt.trace.json.gz " + kDlrm +
                          "/worker1_step_12.1694128201556.pt.trace.json.gz");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_TRUE(Contains(two.out, "vigil analyze: 2 rank(s)")) << two.out;
  RunResult none = Analyze("'" + kDlrm + "/nobody*.json.gz'");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(Contains(none.err, "no trace file matches " + kDlrm + "/nobody*.json.gz"))
      << none.err;
}

TEST_F(AnalyzeInputsTest, AFolderOfDifferentJobsIsRefusedUnlessIndependent) {
  REQUIRE_SHARED(kH100Models);
  RunResult mixed = Analyze(kH100Models);
  EXPECT_EQ(mixed.exit_code, 2) << mixed.err;
  EXPECT_TRUE(mixed.out.empty()) << mixed.out;
  EXPECT_TRUE(Contains(mixed.err, "vigil analyze: these 4 traces are not one job's ranks: "))
      << mixed.err;
  EXPECT_TRUE(Contains(mixed.err, "--independent")) << mixed.err;
  RunResult each = Analyze("--independent " + kH100Models);
  ASSERT_EQ(each.exit_code, 0) << each.err;
  EXPECT_EQ(Count(each.out, "vigil analyze: 1 rank(s)"), 4u) << each.out;
  EXPECT_TRUE(Contains(each.out, "== " + kH100Models +
                                     "/gaunernst_bert-small-uncased__1016001.json.gz (3 of 4, "
                                     "analysed on its own) =="))
      << each.out;
  // One report per file, named after it.
  RunResult json = Analyze("-q --independent --json " + dir_.path() + "/r.json " + kH100Models);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::string bert = dir_.path() + "/r-gaunernst_bert-small-uncased__1016001.json";
  EXPECT_TRUE(fs::exists(bert)) << json.out;
  EXPECT_EQ(Count(json.out, "Wrote json report of "), 4u) << json.out;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

// --independent with reports: each file's reports named after it (OUT-<stem>.ext, or
// DIR/<stem>.ext), each holding that file's analysis; the paths written are listed.
TEST_F(AnalyzeInputsTest, IndependentWritesOneReportPerFile) {
  const std::string h100 = kDataTraces + "/h100_bert_small.json.gz";
  const std::string a100 = kDataTraces + "/a100_alexnet_sync.json.gz";
  const std::string dir = dir_.path() + "/reports/";
  RunResult r = Analyze("-q --independent --json " + dir + " --html " + dir_.path() + "/r.html " +
                        h100 + " " + a100);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct Expect {
    std::string trace, stem, device;
  } each[] = {{h100, "h100_bert_small", "H100"}, {a100, "a100_alexnet_sync", "A100"}};
  for (const Expect& e : each) {
    const std::string json_path = dir + e.stem + ".json";
    const std::string html_path = dir_.path() + "/r-" + e.stem + ".html";
    EXPECT_TRUE(Contains(r.out, "Wrote json report of " + e.trace + " to " + json_path)) << r.out;
    EXPECT_TRUE(Contains(r.out, "Wrote html report of " + e.trace + " to " + html_path)) << r.out;
    const nlohmann::json report = ReadJson(json_path);
    ASSERT_FALSE(report.is_discarded()) << json_path;
    ASSERT_EQ(report["ranks"].size(), 1u) << json_path;
    EXPECT_EQ(report["ranks"][0]["file"], e.trace);
    EXPECT_TRUE(Contains(report["ranks"][0]["device"].get<std::string>(), e.device))
        << report["ranks"][0]["device"];
    ASSERT_TRUE(fs::exists(html_path));
    EXPECT_GT(fs::file_size(html_path), 1000u);
  }
  EXPECT_EQ(Count(r.out, "Wrote "), 4u) << r.out;
  // A trailing '/' names a directory (made when missing, refused when a file); stdout takes one
  // report only.
  RunResult not_dir = Analyze("--independent --json " + h100 + "/ " + h100);
  EXPECT_EQ(not_dir.exit_code, 2);
  EXPECT_TRUE(Contains(not_dir.err, "vigil analyze: --json: mkdir " + h100 + "/: ")) << not_dir.err;
  EXPECT_TRUE(Contains(not_dir.err, "not a directory")) << not_dir.err;
  RunResult to_stdout = Analyze("--independent --json - " + h100);
  EXPECT_EQ(to_stdout.exit_code, 2);
  EXPECT_TRUE(Contains(to_stdout.err, "--independent writes one report per file")) << to_stdout.err;
}

// Two inputs of one name would overwrite each other's reports: refused before reading.
TEST_F(AnalyzeInputsTest, IndependentRefusesTwoFilesOfOneName) {
  const std::string trace = kDataTraces + "/h100_bert_small.json.gz";
  fs::create_directories(dir_.path() + "/x");
  fs::create_directories(dir_.path() + "/y");
  fs::copy_file(trace, dir_.path() + "/x/run.json.gz");
  fs::copy_file(trace, dir_.path() + "/y/run.json.gz");
  RunResult r = Analyze("--independent --html " + dir_.path() + "/r.html " + dir_.path() +
                        "/x/run.json.gz " + dir_.path() + "/y/run.json.gz");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil analyze: --independent: " + dir_.path() + "/x/run.json.gz and " +
                       dir_.path() + "/y/run.json.gz would write the same reports (both are " +
                       "named run); rename one, or analyse them in separate runs\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(dir_.path() + "/r-run.html"));
  // Without report files there is nothing to collide.
  RunResult summaries = Analyze("-q --independent " + dir_.path() + "/x/run.json.gz " +
                                dir_.path() + "/y/run.json.gz");
  EXPECT_EQ(summaries.exit_code, 0) << summaries.err;
}

// Traces of this repository: an NCCL training rank and an inference rank share no collective;
// one file twice under two names is the same rank twice.
TEST_F(AnalyzeInputsTest, AListMixingJobsSaysWhyAndSameJobOverrides) {
  const std::string train = kDataTraces + "/nccl_sampled_rank-0.json.gz";
  const std::string infer = kDataTraces + "/old_format_inference_rank_1.json.gz";
  RunResult mixed = Analyze(train + " " + infer);
  EXPECT_EQ(mixed.exit_code, 2) << mixed.err;
  EXPECT_TRUE(Contains(mixed.err, "these 2 traces are not one job's ranks: ")) << mixed.err;
  RunResult forced = Analyze("--same-job -q " + train + " " + infer);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;

  fs::copy_file(train, dir_.path() + "/a.json.gz");
  fs::copy_file(train, dir_.path() + "/b.json.gz");
  RunResult twice = Analyze(dir_.path() + "/a.json.gz " + dir_.path() + "/b.json.gz");
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_TRUE(Contains(
      twice.err, "rank 0 twice: " + dir_.path() + "/a.json.gz and " + dir_.path() + "/b.json.gz"))
      << twice.err;
  RunResult once = Analyze("-q " + train + " " + train);  // The same path twice: read once.
  EXPECT_EQ(once.exit_code, 0) << once.err;
}

// Checked before the trace is read: nothing on stdout, exit 2, the flag and the reason named.
TEST_F(AnalyzeInputsTest, AnOutputThatCannotBeWrittenFailsBeforeTheAnalysis) {
  const std::string trace = kDataTraces + "/h100_bert_small.json.gz";
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--html /no/such/dir/x.html",
       "vigil analyze: --html: cannot write /no/such/dir/x.html: /no/such/dir does not exist\n"},
      {"--json " + dir_.path(),
       "vigil analyze: --json: " + dir_.path() + " is a directory, not a file\n"},
      {"--perfetto " + trace + "/p.json", "vigil analyze: --perfetto: cannot write " + trace +
                                              "/p.json: " + trace + " is not a directory\n"},
      {"--diff /no/such/trace.json",
       "vigil analyze: --diff: no such file or directory: "
       "/no/such/trace.json\n"},
  };
  for (const Case& c : cases) {
    RunResult r = Analyze(c.args + " " + trace);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, c.message);
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
  }
}

TEST_F(AnalyzeInputsTest, AnUnknownThresholdListsTheValidNames) {
  const std::string trace = kDataTraces + "/h100_bert_small.json.gz";
  RunResult typo = Analyze("--threshold exposed_comm_pc=5 " + trace);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_TRUE(Contains(typo.err,
                       "unknown threshold 'exposed_comm_pc'; did you mean "
                       "'exposed_comm_pct'? The thresholds are: duration_ratio, "
                       "top_kernels, kernel_wait_threshold_ns"))
      << typo.err;
  RunResult other = Analyze("--threshold colour=5 " + trace);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_TRUE(Contains(other.err, "unknown threshold 'colour' The thresholds are: ")) << other.err;
  EXPECT_TRUE(Contains(other.err, "exposed_comm_pct")) << other.err;
}

}  // namespace
}  // namespace vigil
