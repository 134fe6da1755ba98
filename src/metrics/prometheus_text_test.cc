// SPDX-License-Identifier: Apache-2.0
#include "metrics/prometheus_text.h"

#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "base/strings.h"

namespace vigil {
namespace {

constexpr MetricDesc kCpu{"vigil_host_cpu_seconds_total", "CPU time spent by mode.",
                          MetricKind::kCounter, "seconds"};
constexpr MetricDesc kLoad{"vigil_host_load1", "One-minute load average.", MetricKind::kGauge, ""};
constexpr MetricDesc kSm{"vigil_gpu_sm_active_ratio", "Share of time SMs were active.",
                         MetricKind::kGauge, "ratio"};
constexpr MetricDesc kFiles{"vigil_process_open_files", "Open files, by path \\ kind.",
                            MetricKind::kGauge, ""};

std::vector<SeriesData> SmallSet() {
  const double kInf = std::numeric_limits<double>::infinity();
  return {
      {&kLoad, {}, {{1, 0.75}, {2, 0.52}}},
      {&kCpu, {{"cpu", "1"}, {"mode", "user"}}, {{2, 12345.67}}},
      {&kCpu, {{"cpu", "0"}, {"mode", "user"}}, {{2, 1e20}}},
      {&kCpu, {{"cpu", "0"}, {"mode", "idle"}}, {{2, 0.1}}},
      {&kSm, {{"gpu_uuid", "GPU-b"}}, {{2, kInf}}},
      {&kSm, {{"gpu_uuid", "GPU-a"}}, {{2, std::nan("")}}},
      {&kSm, {{"gpu_uuid", "GPU-c"}}, {{2, -kInf}}},
      {&kSm, {{"gpu_uuid", "GPU-d"}}, {}},  // No points: skipped.
      {&kFiles, {{"path", "C:\\tmp\\\"x\"\nend"}}, {{2, -0.0}}},
  };
}

TEST(PrometheusTextTest, RendersGoldenExposition) {
  const std::string text = RenderPrometheusText(SmallSet(), {{"host", "node01"}});
  const std::string golden =
      "# HELP vigil_gpu_sm_active_ratio Share of time SMs were active.\n"
      "# TYPE vigil_gpu_sm_active_ratio gauge\n"
      "vigil_gpu_sm_active_ratio{gpu_uuid=\"GPU-a\",host=\"node01\"} NaN\n"
      "vigil_gpu_sm_active_ratio{gpu_uuid=\"GPU-b\",host=\"node01\"} +Inf\n"
      "vigil_gpu_sm_active_ratio{gpu_uuid=\"GPU-c\",host=\"node01\"} -Inf\n"
      "# HELP vigil_host_cpu_seconds_total CPU time spent by mode.\n"
      "# TYPE vigil_host_cpu_seconds_total counter\n"
      "vigil_host_cpu_seconds_total{cpu=\"0\",host=\"node01\",mode=\"idle\"} 0.1\n"
      "vigil_host_cpu_seconds_total{cpu=\"0\",host=\"node01\",mode=\"user\"} 1e+20\n"
      "vigil_host_cpu_seconds_total{cpu=\"1\",host=\"node01\",mode=\"user\"} 12345.67\n"
      "# HELP vigil_host_load1 One-minute load average.\n"
      "# TYPE vigil_host_load1 gauge\n"
      "vigil_host_load1{host=\"node01\"} 0.52\n"
      "# HELP vigil_process_open_files Open files, by path \\\\ kind.\n"
      "# TYPE vigil_process_open_files gauge\n"
      "vigil_process_open_files{host=\"node01\",path=\"C:\\\\tmp\\\\\\\"x\\\"\\nend\"} -0\n";
  EXPECT_EQ(text, golden);
}

TEST(PrometheusTextTest, SeriesLabelsWinOverExtraLabels) {
  std::vector<SeriesData> series = {{&kLoad, {{"host", "own"}}, {{1, 2}}}};
  EXPECT_EQ(RenderPrometheusText(series, {{"host", "extra"}, {"zone", "z1"}}),
            "# HELP vigil_host_load1 One-minute load average.\n"
            "# TYPE vigil_host_load1 gauge\n"
            "vigil_host_load1{host=\"own\",zone=\"z1\"} 2\n");
  EXPECT_EQ(RenderPrometheusText({}), "");
}

TEST(PrometheusTextTest, SamplesRenderLikeSeries) {
  std::vector<Sample> samples = {{&kLoad, {}, 3.5, 10},
                                 {&kCpu, {{"cpu", "0"}, {"mode", "user"}}, 7, 10}};
  std::string out = "# leading text is kept\n";
  AppendSamplesAsPrometheusText(samples, {}, &out);
  EXPECT_EQ(out,
            "# leading text is kept\n"
            "# HELP vigil_host_cpu_seconds_total CPU time spent by mode.\n"
            "# TYPE vigil_host_cpu_seconds_total counter\n"
            "vigil_host_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 7\n"
            "# HELP vigil_host_load1 One-minute load average.\n"
            "# TYPE vigil_host_load1 gauge\n"
            "vigil_host_load1 3.5\n");
}

// A scrape renders straight from the store: the same text as rendering Latest()'s copies, and
// series older than the age limit left out (the old one comes from a source that has not sent
// since, so only its age hides it).
TEST(PrometheusTextTest, TheStoreRendersAsItsLatestCopies) {
  SeriesStore store;
  MetricBatch old_batch{.time_ns = 1'000, .source = "old", .samples = {}};
  MetricWriter(&old_batch).Add(kLoad, 0.5);
  store.Append(old_batch);
  MetricBatch batch{.time_ns = 10'000, .source = "t", .samples = {}};
  MetricWriter out(&batch);
  for (const char* cpu : {"3", "1", "2", "0"}) {
    out.Add(kCpu, std::atof(cpu) * 1.5, {{"mode", "user"}, {"cpu", cpu}});
  }
  out.Add(kFiles, 7, {{"path", "a\"b"}});
  out.Add(kSm, 0.25, {{"gpu_uuid", "GPU-z"}});
  store.Append(batch);

  EXPECT_EQ(RenderStoreAsPrometheusText(store, 0), RenderPrometheusText(store.Latest({})));
  EXPECT_EQ(RenderStoreAsPrometheusText(store, 5'000),
            RenderPrometheusText(store.Latest({}, 5'000)));
  EXPECT_NE(RenderStoreAsPrometheusText(store, 0).find("vigil_host_load1 0.5\n"),
            std::string::npos);
  EXPECT_EQ(RenderStoreAsPrometheusText(store, 5'000).find("vigil_host_load1"), std::string::npos);
  EXPECT_EQ(RenderStoreAsPrometheusText(SeriesStore(), 0), "");
}

TEST(PrometheusTextTest, ValuesRoundTripThroughText) {
  for (double v : {0.0, -0.0, 1.0, 0.1, 1.0 / 3.0, 123456789012345678.0, 1e-300, 5e-324, 1.7e308,
                   -2.5, 12345.67, 9007199254740993.0}) {
    const std::string text = FormatPrometheusValue(v);
    auto parsed = ParseDouble(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(std::bit_cast<uint64_t>(*parsed), std::bit_cast<uint64_t>(v)) << text;
  }
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatPrometheusValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatPrometheusValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatPrometheusValue(42), "42");
}

std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (std::string_view dir : Split(path == nullptr ? "" : path, ':')) {
    if (dir.empty()) {
      continue;
    }
    std::string candidate = std::string(dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

TEST(PrometheusTextTest, PromtoolAcceptsTheExpositionWithoutLintComplaints) {
  const std::string promtool = FindOnPath("promtool");
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool not on PATH (Debian package 'prometheus'); exposition not linted";
  }
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("vigil_exposition_" + std::to_string(getpid()) + ".prom");
  {
    std::ofstream out(file);
    out << RenderPrometheusText(SmallSet(), {{"host", "node01"}});
  }
  const std::string command = promtool + " check metrics < " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) {
    output.append(buf, n);
  }
  const int status = pclose(pipe);
  std::filesystem::remove(file);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_EQ(output, "") << "promtool complaints:\n" << output;
}

TEST(PrometheusTextTest, PromtoolCatchesABrokenExposition) {
  // Shows the lint test above can fail: a counter without _total is a lint complaint.
  const std::string promtool = FindOnPath("promtool");
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool not on PATH (Debian package 'prometheus')";
  }
  constexpr MetricDesc kBad{"vigil_host_cpu_seconds", "Bad counter.", MetricKind::kCounter, ""};
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("vigil_bad_exposition_" + std::to_string(getpid()) + ".prom");
  {
    std::ofstream out(file);
    out << RenderPrometheusText({{&kBad, {}, {{1, 1}}}});
  }
  const std::string command = promtool + " check metrics < " + file.string() + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  std::filesystem::remove(file);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace vigil
