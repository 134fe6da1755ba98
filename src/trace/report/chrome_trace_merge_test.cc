// SPDX-License-Identifier: Apache-2.0
#include "trace/report/chrome_trace_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "trace/analyze_main.h"

namespace vigil::trace {
namespace {

constexpr std::string_view kSnoop =
    R"json({"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","name":"process_name","pid":4242,"tid":0,"args":{"name":"CUDA calls: train (4242)"}},
{"ph":"X","cat":"cuda_launch","name":"cudaLaunchKernel","pid":4242,"tid":4243,"ts":1751410837000123.456,"dur":2.500,"args":{"layer":"runtime","kernel":"gemm<\"f\">"}}
]}
)json";

TEST(ChromeTraceMergeTest, AppendsEventsShiftedOntoTheKinetoClockExactly) {
  std::string out = R"({"displayTimeUnit":"ns","traceEvents":[{"ph":"X","name":"k","ts":1.000}]})";

  StatusOr<size_t> added = AppendChromeTraceEvents(kSnoop, 1'751'410'836'000'000'000, &out);

  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 2u);
  EXPECT_EQ(out, R"json({"displayTimeUnit":"ns","traceEvents":[{"ph":"X","name":"k","ts":1.000},
{"ph":"M","name":"process_name","pid":4242,"tid":0,"args":{"name":"CUDA calls: train (4242)"}},
{"ph":"X","cat":"cuda_launch","name":"cudaLaunchKernel","pid":4242,"tid":4243,"ts":1000123.456,"dur":2.500,"args":{"layer":"runtime","kernel":"gemm<\"f\">"}}]})json");
}

TEST(ChromeTraceMergeTest, WithoutABaseTimeTheUnixMicrosecondsStay) {
  std::string out = "{\"traceEvents\":[]}\n";

  StatusOr<size_t> added = AppendChromeTraceEvents(
      R"([{"ph":"X","name":"cuMemAlloc_v2","ts":1682725898236567,"dur":1}])", 0, &out);

  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(out,
            "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"cuMemAlloc_v2\",\"ts\":1682725898236567."
            "000,\"dur\":1}]}\n");
}

TEST(ChromeTraceMergeTest, BadInputIsAnErrorAndLeavesTheOutputAlone) {
  const std::string original = R"({"traceEvents":[]})";
  for (std::string_view bad : {std::string_view("not json"), std::string_view(R"({"x":1})"),
                               std::string_view(R"([{"ts":"soon"}])"), std::string_view("[1]")}) {
    std::string out = original;

    StatusOr<size_t> added = AppendChromeTraceEvents(bad, 0, &out);

    EXPECT_FALSE(added.ok()) << bad;
    EXPECT_EQ(added.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(out, original);
  }
}

TEST(ChromeTraceMergeTest, AMissingFileNamesItsPath) {
  std::string out = R"({"traceEvents":[]})";

  StatusOr<size_t> added = MergeChromeTraceFile("/nonexistent/snoop.json", 0, &out);

  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("/nonexistent/snoop.json"), std::string::npos);
}

// The whole flag path on a real Kineto trace with baseTimeNanoseconds (1751410836000000000): a
// call at Unix 1751410837.000123456 s lands 1000123.456 us into the trace's clock.
TEST(ChromeTraceMergeTest, AnalyzeMergesTheSnoopTraceIntoThePerfettoOutput) {
  char dir[] = "/tmp/merge-snoop-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string snoop = std::string(dir) + "/snoop.json";
  const std::string out = std::string(dir) + "/perfetto.json";
  ASSERT_TRUE(WriteFileAtomic(snoop, kSnoop).ok());
  AnalyzeOptions o;
  o.input = std::string(VIGIL_TEST_DATA_DIR) + "/traces/h100_bert_small.json.gz";
  o.perfetto_path = out;
  o.merge_snoop_path = snoop;
  o.quiet = true;
  o.progress = 0;
  FILE* sink = fopen("/dev/null", "w");
  ASSERT_NE(sink, nullptr);

  const int code = RunAnalyze(o, sink, sink);
  o.perfetto_path.clear();
  const int without_perfetto = RunAnalyze(o, sink, sink);

  fclose(sink);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(without_perfetto, 2);
  StatusOr<std::string> text = ReadSmallFile(out, 256 << 20);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find(R"("name":"cudaLaunchKernel","pid":4242,"tid":4243,"ts":1000123.456,)"),
            std::string::npos);
  EXPECT_NE(text->find(R"x("args":{"name":"CUDA calls: train (4242)"})x"), std::string::npos);
  const size_t end = text->find_last_not_of(" \n");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(text->substr(end - 1, 2), "]}");
  unlink(snoop.c_str());
  unlink(out.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace vigil::trace
