// SPDX-License-Identifier: Apache-2.0
// Each alignment strategy on hand-made capture/replay lists, and the order they are tried in.
#include "trace/analysis/capture_alignment.h"

#include <gtest/gtest.h>

namespace vigil::trace {
namespace {

std::vector<AlignItem> Capture(std::initializer_list<std::string_view> names) {
  std::vector<AlignItem> out;
  for (std::string_view n : names) {
    if (n == "memcpy") {
      out.push_back(CaptureItem("hipMemcpyAsync", ""));
    } else if (n == "?") {
      out.push_back(CaptureItem("cudaLaunchKernel", ""));
    } else {
      out.push_back(CaptureItem("hipLaunchKernel", n));
    }
  }
  return out;
}

std::vector<AlignItem> Replay(std::initializer_list<std::pair<std::string_view, int64_t>> items) {
  std::vector<AlignItem> out;
  for (const auto& [n, stream] : items) out.push_back(ReplayItem(n, stream));
  return out;
}

TEST(CaptureAlignmentTest, SameOrderIsPositional) {
  Alignment a = AlignCaptureToReplay(
      Capture({"gemm", "memcpy", "add"}),
      Replay({{"gemm", 7}, {"Memcpy DtoD (Device -> Device)", 7}, {"add", 7}}));
  EXPECT_EQ(a.method, AlignMethod::kPositional);
  EXPECT_EQ(a.capture_of, (std::vector<uint32_t>{0, 1, 2}));
}

TEST(CaptureAlignmentTest, ExtraCaptureLaunchesAreSkippedGreedily) {
  Alignment a = AlignCaptureToReplay(Capture({"gemm", "stray", "add", "add"}),
                                     Replay({{"gemm", 7}, {"add", 7}, {"add", 7}}));
  EXPECT_EQ(a.method, AlignMethod::kGreedy);
  EXPECT_EQ(a.capture_of, (std::vector<uint32_t>{0, 2, 3}));
}

TEST(CaptureAlignmentTest, ReorderedNodesPairWithinTheirName) {
  Alignment a = AlignCaptureToReplay(Capture({"a", "b", "a", "c"}),
                                     Replay({{"b", 7}, {"a", 7}, {"c", 7}, {"a", 7}}));
  EXPECT_EQ(a.method, AlignMethod::kByName);
  EXPECT_EQ(a.capture_of, (std::vector<uint32_t>{1, 0, 3, 2}));
}

TEST(CaptureAlignmentTest, SeveralStreamsUseOneQueuePerStream) {
  // Capture order a1 b1 a2 b2; the GPU ran stream 7's pair first.
  Alignment a = AlignCaptureToReplay(Capture({"a", "b", "x", "y"}),
                                     Replay({{"a", 7}, {"x", 7}, {"b", 9}, {"y", 9}}));
  EXPECT_EQ(a.method, AlignMethod::kByStream);
  EXPECT_EQ(a.capture_of, (std::vector<uint32_t>{0, 2, 1, 3}));
}

TEST(CaptureAlignmentTest, UnnamedCaptureLaunchesMatchAnyKernel) {
  Alignment a = AlignCaptureToReplay(Capture({"?", "?"}), Replay({{"gemm", 7}, {"add", 7}}));
  EXPECT_EQ(a.method, AlignMethod::kPositional);
}

TEST(CaptureAlignmentTest, DifferentWorkDoesNotAlign) {
  EXPECT_FALSE(AlignCaptureToReplay(Capture({"gemm"}), Replay({{"add", 7}})).ok());
  EXPECT_FALSE(AlignCaptureToReplay(Capture({"gemm"}), Replay({{"gemm", 7}, {"gemm", 7}})).ok());
  EXPECT_FALSE(AlignCaptureToReplay(Capture({"memcpy"}), Replay({{"Memset (Device)", 7}})).ok());
  EXPECT_FALSE(AlignCaptureToReplay(Capture({"a"}), {}).ok());
}

}  // namespace
}  // namespace vigil::trace
