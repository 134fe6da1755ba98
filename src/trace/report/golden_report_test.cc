// SPDX-License-Identifier: Apache-2.0
// Golden reports: the terminal summary, the JSON report (default and --hta-compat) and the HTML
// page of every sample trace in tests/data/traces, byte for byte against tests/data/reports. A
// change that alters any output on purpose regenerates them with VIGIL_UPDATE_GOLDENS=1 and the
// diff is reviewed with the change; a refactoring leaves them untouched.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "trace/analyzer.h"
#include "trace/reader/kineto_reader.h"
#include "trace/report/html_report.h"
#include "trace/report/json_report.h"
#include "trace/report/text_report.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;

const char* const kSamples[] = {
    "a100_alexnet_sync",
    "amd_mi250_minitoy",
    "cpu_only_rank-34",
    "h100_bert_small",
    "hip_graph_sglang_decode",
    "nccl_sampled_rank-0",
    "old_format_inference_rank_1",
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The reports name the trace by the path they were given; the goldens by its path in the
// repository, wherever the checkout is.
std::string Relative(std::string text, const std::string& abs, const std::string& rel) {
  for (size_t at = text.find(abs); at != std::string::npos; at = text.find(abs, at + rel.size())) {
    text.replace(at, abs.size(), rel);
  }
  return text;
}

void Check(const fs::path& golden, const std::string& actual) {
  if (std::getenv("VIGIL_UPDATE_GOLDENS") != nullptr) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing (VIGIL_UPDATE_GOLDENS=1 writes it)";
  std::string expected = Slurp(golden);
  if (expected == actual) return;
  size_t at = 0;
  while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) ++at;
  size_t from = at > 80 ? at - 80 : 0;
  ADD_FAILURE() << golden.filename() << " differs at byte " << at << "\n  expected: ..."
                << expected.substr(from, 160) << "\n  actual:   ..." << actual.substr(from, 160);
}

TEST(GoldenReportTest, EverySampleTraceInEveryOutput) {
  const fs::path goldens = fs::path(VIGIL_TEST_DATA_DIR) / "reports";
  for (const char* name : kSamples) {
    SCOPED_TRACE(name);
    const std::string abs = testing::SampleTrace(std::string(name) + ".json.gz");
    const std::string rel = "tests/data/traces/" + std::string(name) + ".json.gz";
    auto traces = ReadTraces(abs);
    ASSERT_TRUE(traces.ok()) << traces.status().ToString();
    Report report = Analyze(*traces, AnalysisConfig{});
    Check(goldens / (std::string(name) + ".txt"), Relative(RenderTextSummary(report), abs, rel));
    Check(goldens / (std::string(name) + ".json"), Relative(RenderJsonReport(report), abs, rel));
    Check(goldens / (std::string(name) + ".html"), Relative(RenderHtmlReport(report), abs, rel));
    AnalysisConfig hta;
    hta.hta_compat = true;
    Report compat = Analyze(*traces, hta);
    Check(goldens / (std::string(name) + ".hta.json"),
          Relative(RenderJsonReport(compat), abs, rel));
  }
}

}  // namespace
}  // namespace vigil::trace
