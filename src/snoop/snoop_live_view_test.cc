// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_live_view.h"

#include <gtest/gtest.h>

#include "snoop/summary_test_util.h"

namespace vigil::snoop {
namespace {

using test_util::Kernel;
using test_util::Leak;

ProcessSummary Process(int pid, std::string command, uint64_t launches, uint64_t syncs,
                       double sync_seconds, uint64_t outstanding) {
  ProcessSummary p;
  p.pid = pid;
  p.command = std::move(command);
  p.launches_total = launches;
  p.syncs_count = syncs;
  p.syncs_seconds = sync_seconds;
  p.memory.outstanding_bytes = outstanding;
  p.memory.peak_bytes = outstanding * 2;
  return p;
}

TEST(SnoopLiveViewTest, RatesAreTheDifferenceOverTheInterval) {
  SessionSummary before;
  before.processes = {Process(10, "train", 1000, 4, 0.5, 1024)};
  before.processes[0].launches_by_kernel = {Kernel("gemm", 800), Kernel("relu", 200)};
  SessionSummary now;
  now.duration_seconds = 12;
  now.events_seen = 4321;
  now.processes = {Process(10, "train", 3000, 8, 1.5, 4096), Process(11, "eval", 50, 0, 0, 0)};
  now.processes[0].launches_by_kernel = {Kernel("gemm", 1800), Kernel("relu", 1200)};
  now.processes[0].memory.leaks = {Leak(2048, 1, "cudaMalloc", {})};
  now.processes[1].launches_by_kernel = {Kernel("softmax", 50)};
  LiveFrame frame;
  frame.previous = &before;
  frame.current = &now;
  frame.interval_seconds = 2;

  const std::string text = RenderSnoopLive(frame);

  EXPECT_EQ(text, R"txt(vigil snoop  12s  2 processes  4321 events

PID  COMMAND  LAUNCH/s  SYNC/s  BLOCKED  OUTSTANDING     PEAK    LEAKS
 10  train        1.0k     2.0    50.0%      4.0 KiB  8.0 KiB  2.0 KiB
 11  eval           25     0.0     0.0%          0 B      0 B      0 B

LAUNCH/s  TOTAL  PID  KERNEL
     500   1800   10  gemm
     500   1200   10  relu
      25     50   11  softmax
)txt");
}

TEST(SnoopLiveViewTest, KernelRowsFitTheTerminalHeightAndWidth) {
  SessionSummary now;
  now.sampled = true;
  now.sample_ratio = 0.5;
  now.processes = {Process(10, "train", 30, 0, 0, 0)};
  now.processes[0].launches_by_kernel = {Kernel(std::string(100, 'a'), 10), Kernel("b", 10),
                                         Kernel("c", 10)};
  LiveFrame frame;
  frame.current = &now;
  frame.width = 30;
  frame.height = 8;  // Header, blank, 2 process lines, blank, kernel header, last line: room for 1.

  const std::string text = RenderSnoopLive(frame);

  EXPECT_EQ(text, R"txt(vigil snoop  0s  1 process ...

PID  COMMAND  LAUNCH/s  SYN...
 10  train          30     ...

LAUNCH/s  TOTAL  PID  KERNEL
      10     10   10  aaaaa...
)txt");
}

}  // namespace
}  // namespace vigil::snoop
