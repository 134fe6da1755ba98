// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_text.h"

#include <gtest/gtest.h>

#include "snoop/snoop_format.h"
#include "snoop/summary_test_util.h"

namespace vigil::snoop {
namespace {

using test_util::Api;
using test_util::Bucket;
using test_util::Copy;
using test_util::Kernel;
using test_util::Leak;
using test_util::SyncAt;

SessionSummary Session() {
  SessionSummary s;
  s.duration_seconds = 2.5;
  s.events_seen = 1234;
  s.processes.resize(1);
  ProcessSummary& p = s.processes[0];
  p.pid = 4242;
  p.command = "train";
  p.libraries = {"/usr/lib/libcudart.so.12", "/usr/lib/libcuda.so.1"};
  p.launches_total = 30;
  p.launches_by_kernel = {Kernel("gemm_kernel(float*, int)", 20), Kernel("relu", 10)};
  p.graph_launches = 2;
  p.syncs_count = 3;
  p.syncs_seconds = 0.75;
  p.syncs_by_api = {Api("cudaStreamSynchronize", 2, 0.5), Api("cuCtxSynchronize", 1, 0.25)};
  p.syncs_by_stack = {SyncAt({"step (train)", "main (train)"}, "cudaStreamSynchronize", 2, 0.5)};
  p.memory.allocations = 5;
  p.memory.frees = 3;
  p.memory.outstanding_bytes = 3072;
  p.memory.peak_bytes = 8192;
  p.memory.leaks = {Leak(3072, 2, "cudaMalloc", {"leak_buffers (train)", "main (train)"})};
  p.memory.size_histogram = {Bucket(1024, 1), Bucket(4096, 4)};
  p.memory.host_outstanding_bytes = 512;
  p.memory.host_peak_bytes = 2048;
  p.copies = {Copy("HtoD_pageable", 4, 4096), Copy("DtoH", 1, 256)};
  return s;
}

TEST(SnoopTextTest, RendersEveryPartOfAProcess) {
  const std::string text = RenderSnoopSummary(Session());

  EXPECT_EQ(text, R"txt(vigil snoop: 1 process, 2.5s, 1234 events
stacks: native frames only (no Python frames)

pid 4242 train
  libraries: /usr/lib/libcudart.so.12, /usr/lib/libcuda.so.1
  launches: 30 (2 graph launches)
    20  gemm_kernel(float*, int)
    10  relu
  syncs: 3 calls, 750.00ms blocked
    2  500.00ms  cudaStreamSynchronize
    1  250.00ms  cuCtxSynchronize
    by stack:
      500.00ms in 2 calls (cudaStreamSynchronize)
        step (train)
        main (train)
  memory (driver): 5 allocations, 3 frees, 3.0 KiB outstanding, 8.0 KiB peak
    pinned host memory: 512 B outstanding, 2.0 KiB peak
    leak candidates (not freed within the leak age), by allocating stack:
      3.0 KiB in 2 allocations (cudaMalloc)
        leak_buffers (train)
        main (train)
    sizes: <=1.0 KiB x1 <=4.0 KiB x4
  copies:
    HtoD_pageable  4  4.0 KiB
    DtoH           1    256 B
)txt");
}

TEST(SnoopTextTest, SaysWhatQualifiesTheNumbers) {
  SessionSummary s = Session();
  s.sampled = true;
  s.sample_ratio = 0.25;
  s.events_dropped = 9;
  s.python_frames = true;
  s.warnings = {"pid 17: no CUDA library mapped"};
  s.processes[0].exited = true;
  s.processes[0].python = "3.11";
  s.processes[0].has_framework_memory = true;
  s.processes[0].framework_memory.allocations = 1;
  s.processes[0].framework_memory.outstanding_bytes = 1024;
  s.processes[0].framework_memory.peak_bytes = 2048;

  const std::string text = RenderSnoopSummary(s);

  EXPECT_EQ(text.substr(0, text.find("\n\n")), R"txt(vigil snoop: 1 process, 2.5s, 1234 events
sampled: the event budget was exceeded; 25.0% of events recorded
dropped: 9 raw events lost to a full ring buffer
warning: pid 17: no CUDA library mapped)txt");
  EXPECT_NE(text.find("pid 4242 train (exited)\n"), std::string::npos);
  EXPECT_NE(text.find("  python: CPython 3.11 (Python frames in stacks)\n"), std::string::npos);
  EXPECT_NE(text.find("  memory (caching allocator): 1 allocation, 0 frees, 1.0 KiB outstanding, "
                      "2.0 KiB peak\n"
                      "    held by the driver, not in use by the framework: 2.0 KiB\n"),
            std::string::npos)
      << text;
}

TEST(SnoopTextTest, OneMemoryLinePerDeviceAndTheGapPerDevice) {
  SessionSummary s = Session();
  ProcessSummary& p = s.processes[0];
  p.memory.allocations = 5;
  p.memory.frees = 1;
  p.memory.outstanding_bytes = 6 << 20;
  p.memory.peak_bytes = 7 << 20;
  p.memory.by_device = {DeviceMemory{0, 3, 1, 4 << 20, 5 << 20},
                        DeviceMemory{1, 2, 0, 2 << 20, 2 << 20}};
  p.has_framework_memory = true;
  p.framework_memory.allocations = 4;
  p.framework_memory.outstanding_bytes = 3 << 20;
  p.framework_memory.peak_bytes = 3 << 20;
  p.framework_memory.by_device = {DeviceMemory{0, 3, 0, 3 << 20, 3 << 20}};

  const std::string text = RenderSnoopSummary(s);

  EXPECT_NE(text.find("  memory (driver): 5 allocations, 1 free, 6.0 MiB outstanding, 7.0 MiB "
                      "peak\n"
                      "    device 0: 3 allocations, 1 free, 4.0 MiB outstanding, 5.0 MiB peak\n"
                      "    device 1: 2 allocations, 0 frees, 2.0 MiB outstanding, 2.0 MiB peak\n"),
            std::string::npos)
      << text;
  // One device in the framework view: its total line says it all.
  EXPECT_EQ(text.find("    device 0: 3 allocations, 0 frees"), std::string::npos) << text;
  EXPECT_NE(text.find("    held by the driver, not in use by the framework: 3.0 MiB (device 0: "
                      "1.0 MiB, device 1: 2.0 MiB)\n"),
            std::string::npos)
      << text;
}

TEST(SnoopTextTest, NativeFramesOnlyIsSaidOnceWhenAWarningSaysIt) {
  SessionSummary s = Session();
  s.warnings = {"stacks are native frames only (no Python frames)"};

  const std::string text = RenderSnoopSummary(s);

  EXPECT_EQ(text.substr(0, text.find("\n\n")), R"txt(vigil snoop: 1 process, 2.5s, 1234 events
warning: stacks are native frames only (no Python frames))txt");
}

TEST(SnoopTextTest, CapsRowsAndFramesAndCutsLongNames) {
  SessionSummary s = Session();
  ProcessSummary& p = s.processes[0];
  p.launches_by_kernel = {Kernel(std::string(200, 'k'), 5), Kernel("b", 4), Kernel("c", 3)};
  p.memory.leaks[0].stack.frames = {"f1", "f2", "f3", "f4"};
  p.memory.leaks.push_back(Leak(10, 1, "cuMemAlloc_v2", {"g1"}));
  TextOptions o;
  o.max_rows = 2;
  o.max_frames = 2;
  o.max_stacks = 1;
  o.width = 40;

  const std::string text = RenderSnoopSummary(s, o);

  EXPECT_NE(text.find("    5  " + std::string(30, 'k') + "...\n    4  b\n    ... 1 more kernels\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("        f1\n        f2\n        ... 2 more frames\n      ... 1 more leak "
                      "groups\n"),
            std::string::npos)
      << text;
}

TEST(SnoopTextTest, AProcessWithNothingTraced) {
  SessionSummary s;
  s.processes.resize(1);
  s.processes[0].pid = 5;

  const std::string text = RenderSnoopSummary(s);

  EXPECT_EQ(text, R"txt(vigil snoop: 1 process, 0.0s, 0 events
stacks: native frames only (no Python frames)

pid 5 ?
  libraries: none found
  launches: 0
  syncs: 0 calls, 0.0us blocked
  memory (driver): 0 allocations, 0 frees, 0 B outstanding, 0 B peak
  copies: none
)txt");
}

TEST(SnoopFormatTest, HumanNumbers) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(uint64_t{3} << 30), "3.0 GiB");
  EXPECT_EQ(FormatSeconds(0.0001234), "123.4us");
  EXPECT_EQ(FormatSeconds(0.0123), "12.30ms");
  EXPECT_EQ(FormatSeconds(2.5), "2.500s");
  EXPECT_EQ(FormatRate(2.54), "2.5");
  EXPECT_EQ(FormatRate(950), "950");
  EXPECT_EQ(FormatRate(12345), "12.3k");
  EXPECT_EQ(FormatRate(4.2e6), "4.20M");
  EXPECT_EQ(Ellipsize("abcdefgh", 6), "abc...");
  EXPECT_EQ(Ellipsize("abc", 6), "abc");
}

}  // namespace
}  // namespace vigil::snoop
