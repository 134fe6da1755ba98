// SPDX-License-Identifier: Apache-2.0
#include "fleet/analysis_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1000000000;

// Stand-ins for `vigil` that crash, hang or fail the way a bad trace could make the analyser do.
class AnalysisRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vigil-runner-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/sh\n" + body + "\n", 0755).ok());
    return path;
  }
  AnalysisRun Run(const std::string& binary) {
    AnalysisRun r;
    r.vigil_binary = binary;
    r.input = (dir_ / "traces").string();
    r.json_path = (dir_ / "report.json").string();
    r.timeout_ns = 20 * kSec;
    return r;
  }
  std::filesystem::path dir_;
};

TEST_F(AnalysisRunnerTest, PassesTheAnalyzeArgumentsAndSucceeds) {
  // Writes its arguments where the report goes: argv is "analyze IN --json OUT ...".
  const std::string ok = Script("vigil", "echo \"$*\" > \"$4\"");
  ASSERT_TRUE(RunAnalysisChild(Run(ok)).ok());
  auto text = ReadSmallFile((dir_ / "report.json").string(), 4096);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "analyze " + (dir_ / "traces").string() + " --json " +
                       (dir_ / "report.json").string() +
                       " --quiet --progress never --threads 2 --same-job\n");
}

TEST_F(AnalysisRunnerTest, ACrashIsAnErrorNamingTheSignal) {
  Status s = RunAnalysisChild(Run(Script("crash", "echo 'reading rank 3' >&2; kill -SEGV $$")));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("signal 11"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("reading rank 3"), std::string::npos) << s.ToString();
}

TEST_F(AnalysisRunnerTest, AFailureCarriesItsStderr) {
  Status s = RunAnalysisChild(Run(Script("fail", "echo 'vigil: analyze: truncated' >&2; exit 1")));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("code 1"), std::string::npos);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.ToString();
}

TEST_F(AnalysisRunnerTest, AHangIsKilledAtTheDeadline) {
  AnalysisRun r = Run(Script("hang", "exec sleep 60"));
  r.timeout_ns = kSec / 5;
  const auto start = std::chrono::steady_clock::now();
  Status s = RunAnalysisChild(r);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(AnalysisRunnerTest, MissingBinaryIsNotFound) {
  EXPECT_EQ(RunAnalysisChild(Run((dir_ / "nope").string())).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
