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
    ASSERT_EQ(lines.size(), 3u) << out;  // Two rows and the note (nothing common to leave out).
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_LE(lines[i].size(), static_cast<size_t>(width)) << width << ": " << lines[i];
    }
    EXPECT_EQ(lines[0].rfind("vigil_gpu_memory_used_bytes{", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("...}"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("42949672960  bytes"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[1].rfind("vigil_host_load1 ", 0), 0u) << lines[1];
    EXPECT_NE(lines[2].find("1 of 2 rows shortened"), std::string::npos) << lines[2];
    EXPECT_NE(lines[2].find("--wide"), std::string::npos) << lines[2];
  }
}

// Rows that differ only in a uuid's tail and a sensor stay apart once shortened.
TEST(MetricsTableTest, ShortenedRowsStayDistinct) {
  const nlohmann::json reply = nlohmann::json::parse(R"({"series":[
    {"name":"vigil_gpu_temperature_celsius","unit":"celsius","points":[[1,64]],
     "labels":{"gpu_uuid":"GPU-5151a000-0000-4000-8000-000000000000","gpu_model":"H100 SXM",
               "sensor":"gpu","simulated":"true"}},
    {"name":"vigil_gpu_temperature_celsius","unit":"celsius","points":[[1,65]],
     "labels":{"gpu_uuid":"GPU-5151a000-0000-4000-8000-000000000000","gpu_model":"H100 SXM",
               "sensor":"memory","simulated":"true"}},
    {"name":"vigil_gpu_temperature_celsius","unit":"celsius","points":[[1,63]],
     "labels":{"gpu_uuid":"GPU-5151a000-0000-4000-8000-000000000001","gpu_model":"H100 SXM",
               "sensor":"gpu","simulated":"true"}}]})");
  const std::string out = RenderMetricsTable(reply, 90);
  EXPECT_NE(out.find(R"(vigil_gpu_temperature_celsius{gpu_uuid="GPU-51..000000",sensor="gpu"})"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"({gpu_uuid="GPU-51..000000",sensor="memory"})"), std::string::npos) << out;
  EXPECT_NE(out.find(R"({gpu_uuid="GPU-51..000001",sensor="gpu"})"), std::string::npos) << out;
  EXPECT_NE(out.find("same on every row: gpu_model, simulated"), std::string::npos) << out;
  for (const std::string& line : Lines(out)) {
    if (line.starts_with("vigil_")) {
      EXPECT_LE(line.size(), 90u) << line;
    }
  }
}

TEST(MetricsTableTest, NameStaysWholeOnATinyTerminal) {
  const std::string out = RenderMetricsTable(kReply, 20);
  EXPECT_NE(out.find("vigil_gpu_memory_used_bytes{...}"), std::string::npos) << out;
  EXPECT_NE(out.find("42949672960"), std::string::npos) << out;
}

}  // namespace
}  // namespace vigil
