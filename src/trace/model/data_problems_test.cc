// SPDX-License-Identifier: Apache-2.0
// Named data problems on synthetic traces built to show each one.
#include "trace/model/data_problems.h"

#include <gtest/gtest.h>

#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

std::vector<std::string_view> Ids(const TraceBuilder& b) {
  TempDir dir;
  dir.Write("rank-0.json", b.Json());
  auto t = ReadTraces(dir.path());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::vector<std::string_view> out;
  if (!t.ok()) return out;
  for (const DataProblem& p : FindDataProblems((*t)[0])) out.push_back(p.id);
  return out;
}

TEST(DataProblemsTest, ConsistentTraceHasNone) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 2, 1).Gpu("kernel", "k", 5, 10, 1);
  b.Launch("cudaLaunchKernel", 3, 2, 2).Gpu("kernel", "k", 15, 10, 2);
  EXPECT_TRUE(Ids(b).empty());
}

TEST(DataProblemsTest, LaunchesWithoutAnyGpuEventAreNotCaptured) {
  TraceBuilder b;
  b.Cpu("cpu_op", "aten::mm", 0, 10);
  b.Launch("cudaLaunchKernel", 1, 2, 1).Launch("cudaMemcpyAsync", 4, 2, 2);
  EXPECT_EQ(Ids(b), std::vector<std::string_view>{"gpu_activity_not_captured"});
}

TEST(DataProblemsTest, PartialCaptureOverlapAndOrphans) {
  TraceBuilder b;
  b.Launch("cudaLaunchKernel", 0, 2, 1).Gpu("kernel", "a", 5, 10, 1);
  b.Launch("cudaLaunchKernel", 3, 2, 2);  // never ran on the GPU
  b.Gpu("kernel", "b", 8, 10, 3);         // overlaps a on stream 7, no launch
  const std::vector<std::string_view> want = {"gpu_activity_partial", "gpu_events_without_launch",
                                              "overlapping_kernels_same_stream"};
  EXPECT_EQ(Ids(b), want);
}

TEST(DataProblemsTest, LaunchesInsideAStreamCaptureAreExpectedToHaveNoGpuEvent) {
  TraceBuilder b;
  b.Launch("cudaStreamBeginCapture", 0, 1, 10);
  b.Launch("cudaLaunchKernel", 2, 1, 11).Launch("cudaLaunchKernel", 4, 1, 12);
  b.Launch("cudaStreamEndCapture", 6, 1, 13);
  b.Launch("cudaGraphLaunch", 10, 2, 14)
      .Gpu("kernel", "a", 12, 5, 14)
      .Gpu("kernel", "b", 17, 5, 14);
  EXPECT_TRUE(Ids(b).empty());
}

TEST(DataProblemsTest, AffectedAnalysesAreJoinedForText) {
  EXPECT_EQ(JoinAffected({"a", "b", "c"}), "a, b and c");
  EXPECT_EQ(JoinAffected({"a"}), "a");
}

}  // namespace
}  // namespace vigil::trace
