// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/kineto_reader.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "trace/model/linker.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::MakeTrace;
using testing::SampleTrace;
using testing::TempDir;
using testing::XEvent;

size_t CountKind(const RankTrace& t, EventKind k) {
  size_t n = 0;
  for (EventKind x : t.events.kind) n += x == k;
  return n;
}

std::string SmallTrace() {
  return MakeTrace(
      {XEvent("cpu_op", "aten::mm", 10.5, 20.25, 1, 1),
       XEvent("cuda_runtime", "cudaLaunchKernel", 12.001, 3.0, 1, 1, R"("correlation": 7)"),
       XEvent(
           "kernel", "sgemm_kernel", 16.0, 8.125, 0, 7,
           R"("correlation": 7, "stream": 7, "device": 0, "grid": [4, 2, 1], "block": [128, 1, 1])"),
       R"({"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 12.001, "cat": "ac2g", "name": "ac2g"})",
       R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 11, "args": {"Total Reserved": 2048, "Total Allocated": 1024, "Bytes": 512, "Device Id": 0, "Device Type": 1}})"},
      R"("distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8})");
}

TEST(KinetoReaderTest, PlainAndGzipGiveTheSameExactNanosecondRows) {
  TempDir dir;
  ReadOptions with_flows;
  with_flows.keep_flows = true;
  for (bool gz : {false, true}) {
    std::string path = dir.Write(gz ? "t.json.gz" : "t.json", SmallTrace(), gz);
    auto t = ReadTraceFile(path, with_flows);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_FALSE(t->quality.truncated);
    ASSERT_EQ(t->events.size(), 3u);
    EXPECT_EQ(t->events.ts[0], 10500);
    EXPECT_EQ(t->events.dur[0], 20250);
    EXPECT_EQ(t->events.ts[1], 12001);
    EXPECT_EQ(t->events.dur[2], 8125);
    EXPECT_EQ(t->events.stream[2], 7);
    EXPECT_EQ(t->events.correlation[2], 7);
    EXPECT_EQ(t->strings.Get(t->events.name[2]), "sgemm_kernel");
    ASSERT_EQ(t->kernel_args.size(), 1u);
    EXPECT_EQ(t->kernel_args[0].grid[0], 4);
    EXPECT_EQ(t->kernel_args[0].block[0], 128);
    EXPECT_EQ(t->meta.rank, 3);
    EXPECT_EQ(t->meta.world_size, 8);
    ASSERT_EQ(t->memory.size(), 1u);
    EXPECT_EQ(t->memory[0].total_allocated, 1024);
    ASSERT_EQ(t->flows.size(), 1u);
    EXPECT_TRUE(t->any_float_ts);
    LinkTrace(&*t);
    EXPECT_EQ(t->links.launcher[2], 1u);
    EXPECT_EQ(t->links.parent[1], 0u);
  }
}

TEST(KinetoReaderTest, MetadataAfterTraceEventsAndEscapedBracesInStrings) {
  TempDir dir;
  std::string doc = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "odd \"{[name]}\" \\", "pid": "Spans", "tid": 2, "ts": 1, "dur": 2}
  ], "baseTimeNanoseconds": 1700000000000000000, "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000, "numSms": 132}]})";
  auto t = ReadTraceFile(dir.Write("t.json", doc));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->events.size(), 1u);
  EXPECT_EQ(t->strings.Get(t->events.name[0]), "odd \"{[name]}\" \\");
  EXPECT_LT(t->events.pid[0], 0);  // string pid interned
  EXPECT_TRUE(t->meta.has_base_time);
  EXPECT_EQ(t->meta.base_time_ns, 1700000000000000000LL);
  ASSERT_EQ(t->meta.devices.size(), 1u);
  EXPECT_EQ(t->meta.devices[0].num_sms, 132);
  EXPECT_EQ(t->meta.devices[0].total_memory, 85000000000LL);
}

TEST(KinetoReaderTest, EmptyFileIsAnError) {
  TempDir dir;
  EXPECT_FALSE(ReadTraceFile(dir.Write("e.json", "")).ok());
  EXPECT_FALSE(ReadTraceFile(dir.Write("n.json", "[1,2]")).ok());
  EXPECT_FALSE(ReadTraceFile(dir.path() + "/missing.json").ok());
}

TEST(KinetoReaderTest, TruncatedJsonKeepsEveryCompleteEvent) {
  TempDir dir;
  std::string doc = SmallTrace();
  size_t cut = doc.find("sgemm_kernel") + 4;  // inside the third event
  auto t = ReadTraceFile(dir.Write("cut.json", doc.substr(0, cut)));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->quality.truncated);
  EXPECT_EQ(t->events.size(), 2u);
  EXPECT_FALSE(t->quality.truncation_detail.empty());
}

TEST(KinetoReaderTest, TruncatedGzipKeepsWhatWasDecompressed) {
  TempDir dir;
  std::vector<std::string> events;
  for (int i = 0; i < 20000; ++i) {
    events.push_back(XEvent("cpu_op", "op" + std::to_string(i % 97), i * 3.0, 2.0, 1, 1));
  }
  std::string path = dir.Write("big.json.gz", MakeTrace(events), true);
  auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  auto t = ReadTraceFile(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->quality.truncated);
  EXPECT_GT(t->events.size(), 1000u);
  EXPECT_LT(t->events.size(), 20000u);
  // The events kept are complete and in order.
  for (size_t i = 0; i < t->events.size(); ++i) ASSERT_EQ(t->events.ts[i], int64_t(i) * 3000);
}

TEST(KinetoReaderTest, SmallWindowSplitsEventsAnywhereWithoutChangingResults) {
  TempDir dir;
  std::vector<std::string> events;
  for (int i = 0; i < 3000; ++i) {
    std::string long_name(static_cast<size_t>(i % 700), 'x');
    events.push_back(XEvent("kernel", "k" + long_name, i * 1.5, 1.25, 0, 7,
                            R"("stream": 7, "correlation": )" + std::to_string(i)));
  }
  std::string path = dir.Write("w.json", MakeTrace(events));
  ReadOptions small;
  small.window_bytes = 512;
  auto a = ReadTraceFile(path, small);
  auto b = ReadTraceFile(path);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->events.size(), 3000u);
  EXPECT_EQ(a->events.ts, b->events.ts);
  EXPECT_EQ(a->events.correlation, b->events.correlation);
  EXPECT_EQ(a->events.dur[2999], 1250);
}

TEST(KinetoReaderTest, ValuesBeyondThePackedWidthsReadBackExactly) {
  // Columns store 16/32 bits a row; anything wider (or equal to the escape code) must survive.
  TempDir dir;
  std::vector<std::string> events = {
      R"({"ph": "X", "cat": "kernel", "name": "wide", "pid": 4294967296123,)"
      R"( "tid": 140737488355328, "ts": 1.0, "dur": 3000000.0, "args": {"stream": -2147483648,)"
      R"( "correlation": 5000000000, "External id": -7, "bytes": 1099511627776, "device": 40000}})",
      XEvent("kernel", "narrow", 2.0, 1.0, 1, 2,
             R"("stream": 7, "correlation": 8, "External id": 9, "bytes": 10, "device": 3)")};
  auto t = ReadTraceFile(dir.Write("wide.json", MakeTrace(events)));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->events.size(), 2u);
  const EventTable& e = t->events;
  EXPECT_EQ(e.dur[0], 3000000000LL);
  EXPECT_EQ(e.pid[0], 4294967296123LL);
  EXPECT_EQ(e.tid[0], 140737488355328LL);
  EXPECT_EQ(e.stream[0], -2147483648LL);
  EXPECT_EQ(e.correlation[0], 5000000000LL);
  EXPECT_EQ(e.external_id[0], -7);
  EXPECT_EQ(e.bytes[0], 1099511627776LL);
  EXPECT_EQ(e.device[0], 40000);
  EXPECT_EQ(e.dur.wide_rows() + e.correlation.wide_rows() + e.bytes.wide_rows() +
                e.device.wide_rows() + e.stream.wide_rows(),
            4u);
  EXPECT_EQ(e.pid.distinct_values(), 2u);
  EXPECT_EQ(e.dur[1], 1000);
  EXPECT_EQ(e.pid[1], 1);
  EXPECT_EQ(e.tid[1], 2);
  EXPECT_EQ(e.stream[1], 7);
  EXPECT_EQ(e.correlation[1], 8);
  EXPECT_EQ(e.external_id[1], 9);
  EXPECT_EQ(e.bytes[1], 10);
  EXPECT_EQ(e.device[1], 3);
  EXPECT_EQ(t->strings.Get(e.cat[1]), "kernel");
  std::vector<int64_t> corr(e.correlation.begin(), e.correlation.end());
  EXPECT_EQ(corr, (std::vector<int64_t>{5000000000LL, 8}));
}

TEST(KinetoReaderTest, KernelsLaunchedAlikeShareTheirArgsAndTimestampsStayExact) {
  TempDir dir;
  std::vector<std::string> events;
  const std::string a = R"("stream": 7, "grid": [4, 2, 1], "block": [128, 1, 1])";
  const std::string b = R"("stream": 7, "grid": [8, 1, 1], "block": [256, 1, 1])";
  for (int i = 0; i < 600; ++i) {
    // Every 100th event lies days away from its neighbours (beyond a 32-bit ns offset).
    double ts = i % 100 == 99 ? 4e11 + i : 1000.0 + i;
    if (i % 3 == 2) {
      events.push_back(XEvent("cpu_op", "op", ts, 1.0, 1, 1));
    } else {
      events.push_back(XEvent("kernel", "k", ts, 1.0, 0, 7, i % 3 == 0 ? a : b));
    }
  }
  auto t = ReadTraceFile(dir.Write("k.json", MakeTrace(events)));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->events.size(), 600u);
  EXPECT_EQ(t->kernel_args.size(), 2u);
  EXPECT_EQ(t->events.kargs.indexed_rows(), 400u);
  for (size_t i = 0; i < 600; ++i) {
    const int64_t want = i % 100 == 99 ? 400000000000000LL + static_cast<int64_t>(i) * 1000
                                       : 1000000 + static_cast<int64_t>(i) * 1000;
    ASSERT_EQ(t->events.ts[i], want) << i;
    const uint32_t k = t->events.kargs[i];
    if (i % 3 == 2) {
      EXPECT_EQ(k, kNoIndex) << i;
      continue;
    }
    ASSERT_NE(k, kNoIndex) << i;
    EXPECT_EQ(t->kernel_args[k].grid[0], i % 3 == 0 ? 4 : 8) << i;
    EXPECT_EQ(t->kernel_args[k].block[0], i % 3 == 0 ? 128 : 256) << i;
  }
  EXPECT_GE(t->events.ts.wide_rows(), 6u);
}

TEST(KinetoReaderTest, RankFromFileNamePatterns) {
  EXPECT_EQ(RankFromFileName("rank-3.json.gz"), 3);
  EXPECT_EQ(RankFromFileName("job_rank_12.pt.trace.json"), 12);
  EXPECT_EQ(RankFromFileName("trace_rank5.json"), 5);
  EXPECT_EQ(RankFromFileName("trace.json"), -1);
}

TEST(KinetoReaderTest, DirectoryOfRanksIsReadInParallelAndSortedByRank) {
  TempDir dir;
  dir.Write("a.json",
            MakeTrace({XEvent("cpu_op", "a", 1, 1, 1, 1)}, R"("distributedInfo": {"rank": 2})"));
  dir.Write("b.json.gz",
            MakeTrace({XEvent("cpu_op", "b", 1, 1, 1, 1)}, R"("distributedInfo": {"rank": 0})"),
            true);
  dir.Write("worker_rank_1.json", MakeTrace({XEvent("cpu_op", "c", 1, 1, 1, 1)}));
  dir.Write("notes.txt", "ignored");
  ReadOptions opts;
  opts.threads = 3;
  auto ranks = ReadTraces(dir.path(), opts);
  ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();
  ASSERT_EQ(ranks->size(), 3u);
  EXPECT_EQ((*ranks)[0].meta.rank, 0);
  EXPECT_EQ((*ranks)[1].meta.rank, 1);
  EXPECT_TRUE((*ranks)[1].meta.rank_from_file_name);
  EXPECT_EQ((*ranks)[2].meta.rank, 2);
}

// Counts from the manifest of the source repositories (see tests/data/traces/README.md).
TEST(KinetoReaderTest, VendoredSamplesMatchManifestCounts) {
  auto nccl = ReadTraceFile(SampleTrace("nccl_sampled_rank-0.json.gz"));
  ASSERT_TRUE(nccl.ok()) << nccl.status().ToString();
  EXPECT_EQ(CountKind(*nccl, EventKind::kKernel), 1154u);
  EXPECT_EQ(CountKind(*nccl, EventKind::kMemcpy), 40u);
  EXPECT_EQ(CountKind(*nccl, EventKind::kMemset), 10u);
  EXPECT_EQ(CountKind(*nccl, EventKind::kCpuOp), 2329u);
  EXPECT_EQ(CountKind(*nccl, EventKind::kRuntime) + CountKind(*nccl, EventKind::kDriver), 1204u);
  EXPECT_EQ(nccl->meta.rank, 0);
  EXPECT_EQ(nccl->meta.world_size, 128);

  auto amd = ReadTraceFile(SampleTrace("amd_mi250_minitoy.json.gz"));
  ASSERT_TRUE(amd.ok());
  // Flow endpoints are counted, and not stored unless asked for.
  EXPECT_EQ(amd->quality.flow_events, 45u);
  EXPECT_TRUE(amd->flows.empty());
  ReadOptions with_flows;
  with_flows.keep_flows = true;
  auto amd_flows = ReadTraceFile(SampleTrace("amd_mi250_minitoy.json.gz"), with_flows);
  ASSERT_TRUE(amd_flows.ok());
  EXPECT_EQ(amd_flows->flows.size(), 45u);
  EXPECT_EQ(CountKind(*amd, EventKind::kKernel), 14u);
  EXPECT_EQ(CountKind(*amd, EventKind::kMemcpy), 2u);
  EXPECT_EQ(CountKind(*amd, EventKind::kRuntime), 21u);
  EXPECT_TRUE(amd->meta.has_base_time);
  LinkTrace(&*amd);
  EXPECT_EQ(amd->meta.runtime_family, "hip");

  auto old = ReadTraceFile(SampleTrace("old_format_inference_rank_1.json.gz"));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(CountKind(*old, EventKind::kKernel), 4u);
  EXPECT_EQ(CountKind(*old, EventKind::kRuntime), 8u);
  LinkTrace(&*old);
  EXPECT_EQ(old->quality.gpu_without_launch, 0u);

  auto cpu = ReadTraceFile(SampleTrace("cpu_only_rank-34.json.gz"));
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(CountKind(*cpu, EventKind::kCpuOp), 7379u);
  EXPECT_EQ(cpu->meta.rank, 34);
  LinkTrace(&*cpu);
  EXPECT_TRUE(cpu->links.gpu.empty());
  EXPECT_EQ(cpu->links.steps.size(), 5u);

  auto graph = ReadTraceFile(SampleTrace("hip_graph_sglang_decode.json.gz"));
  ASSERT_TRUE(graph.ok());
  LinkTrace(&*graph);
  EXPECT_EQ(CountKind(*graph, EventKind::kKernel), 555u);
  EXPECT_EQ(graph->links.graph_launches.size(), 1u);
  EXPECT_GT(graph->links.graph_kernels, 100u);
}

}  // namespace
}  // namespace vigil::trace
