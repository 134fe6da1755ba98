// SPDX-License-Identifier: Apache-2.0
#include "cli/metrics_table.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

const nlohmann::json kReply = nlohmann::json::parse(R"({"series":[
  {"name":"vigil_gpu_memory_used_bytes","kind":"gauge","unit":"bytes",
   "labels":{"gpu_uuid":"GPU-aaaaaaaa-0000-0000-0000-000000000000","gpu_index":"0",
             "gpu_model":"H100"},"points":[[1,42949672960]]},
  {"name":"vigil_host_load1","kind":"gauge","unit":"","labels":{},"points":[[1,0.5]]}]})");

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TEST(MetricsTableTest, WholeRowsWithoutAWidth) {
  const std::string out = RenderMetricsTable(kReply, 0);
  EXPECT_NE(out.find(R"(gpu_uuid="GPU-aaaaaaaa-0000-0000-0000-000000000000"})"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("--wide"), std::string::npos) << out;
}

TEST(MetricsTableTest, RowsFitTheWidthAndKeepNameValueAndUnit) {
  for (int width : {60, 80, 100}) {
    const std::string out = RenderMetricsTable(kReply, width);
    const std::vector<std::string> lines = Lines(out);
    ASSERT_EQ(lines.size(), 3u) << out;  // Two rows and the note.
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_LE(lines[i].size(), static_cast<size_t>(width)) << width << ": " << lines[i];
    }
    EXPECT_EQ(lines[0].rfind("vigil_gpu_memory_used_bytes{", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("...}"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("42949672960  bytes"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1].rfind("vigil_host_load1 ", 0), 0u) << lines[1];
    EXPECT_NE(lines[2].find("1 of 2 rows cut"), std::string::npos) << lines[2];
    EXPECT_NE(lines[2].find("--wide"), std::string::npos) << lines[2];
  }
}

TEST(MetricsTableTest, NameStaysWholeOnATinyTerminal) {
  const std::string out = RenderMetricsTable(kReply, 20);
  EXPECT_NE(out.find("vigil_gpu_memory_used_bytes{...}"), std::string::npos) << out;
  EXPECT_NE(out.find("42949672960"), std::string::npos) << out;
}

}  // namespace
}  // namespace vigil
