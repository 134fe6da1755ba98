// SPDX-License-Identifier: Apache-2.0
// `vigil analyze` with what a user gives it: several files and globs of one job's ranks; a folder
// or list that mixes traces of different jobs (refused with the reason, or each file on its own
// with --independent); outputs that cannot be written (refused before reading anything); and a
// threshold name that does not exist (the valid names listed). The multi-rank checks use the real
// traces of ../shared/traces and skip with a message when that folder is absent.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

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
  RunResult json = Analyze("--independent --json " + dir_.path() + "/r.json " + kH100Models);
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_TRUE(Contains(json.err, "--independent prints one summary per file")) << json.err;
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
