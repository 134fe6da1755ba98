// SPDX-License-Identifier: Apache-2.0
// Every HTA reference output in ../shared/traces/hta_reference against `--hta-compat`: each
// value within 0.5 %. Values HTA failed to compute ({"error": ...}) are listed, not compared.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/testing/hta_reference.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ReferenceFiles(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    std::string p = entry.path().string();
    if (p.size() > 9 && p.compare(p.size() - 9, 9, ".hta.json") == 0) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(HtaCompatTest, EveryReferenceTraceWithinHalfAPercent) {
  fs::path shared = fs::path(VIGIL_SHARED_DIR) / "traces";
  fs::path refs = shared / "hta_reference";
  if (!fs::exists(refs)) GTEST_SKIP() << "no " << refs << ": the shared trace set is absent";
  std::vector<std::string> files = ReferenceFiles(refs);
  ASSERT_FALSE(files.empty());
  int compared = 0;
  for (const std::string& ref : files) {
    std::string rel = fs::relative(ref, refs).string();
    std::string trace_path = (shared / rel.substr(0, rel.size() - 9)).string();
    SCOPED_TRACE(rel);
    std::vector<RankTrace> traces;
    auto one = ReadTraces(trace_path);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    traces = std::move(*one);
    AnalysisConfig config;
    config.hta_compat = true;
    Report report = Analyze(traces, config);
    ASSERT_EQ(report.ranks.size(), 1u);
    testing::HtaComparison c = testing::CompareWithHta(report.ranks[0], ref);
    ASSERT_TRUE(c.loaded);
    compared += c.compared;
    for (const std::string& e : c.hta_errors)
      std::printf("HTA failed on %s: %s\n", rel.c_str(), e.c_str());
    EXPECT_TRUE(c.mismatches.empty()) << [&] {
      std::string s;
      for (const std::string& m : c.mismatches) s += "  " + m + "\n";
      return s;
    }();
  }
  std::printf("compared %d values over %zu reference files\n", compared, files.size());
}

}  // namespace
}  // namespace vigil::trace
