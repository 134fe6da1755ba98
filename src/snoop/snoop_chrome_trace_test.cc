// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_chrome_trace.h"

#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace vigil::snoop {
namespace {

RawEvent Event(int64_t start, int64_t dur, ApiGroup group, std::string api) {
  RawEvent e;
  e.start_unix_ns = start;
  e.duration_ns = dur;
  e.pid = 4242;
  e.tid = 4243;
  e.group = group;
  e.api = std::move(api);
  return e;
}

std::vector<RawEvent> Events() {
  std::vector<RawEvent> events;
  RawEvent launch = Event(1'800'000'000'123'456'789, 2'500, ApiGroup::kLaunch, "cudaLaunchKernel");
  launch.kernel = "gemm_kernel(float*, int)";
  events.push_back(launch);
  RawEvent copy = Event(1'800'000'000'123'460'000, 1'000'001, ApiGroup::kCopy, "cuMemcpyHtoD_v2");
  copy.bytes = 4096;
  copy.copy_kind = "HtoD_pageable";
  events.push_back(copy);
  RawEvent alloc = Event(1'800'000'000'200'000'000, 0, ApiGroup::kAlloc, "caching_allocator");
  alloc.bytes = 1 << 20;
  alloc.address = 0x7f0000001000;
  events.push_back(alloc);
  return events;
}

SessionSummary Named() {
  SessionSummary s;
  s.processes.resize(1);
  s.processes[0].pid = 4242;
  s.processes[0].command = "train";
  return s;
}

TEST(SnoopChromeTraceTest, WritesMetadataThenOneSlicePerCallInUnixMicroseconds) {
  const std::string text = RenderSnoopChromeTrace(Events(), Named());

  EXPECT_EQ(text, R"json({"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","name":"process_name","pid":4242,"tid":0,"args":{"name":"CUDA calls: train (4242)"}},
{"ph":"M","name":"thread_name","pid":4242,"tid":4243,"args":{"name":"thread 4243"}},
{"ph":"X","cat":"cuda_launch","name":"cudaLaunchKernel","pid":4242,"tid":4243,"ts":1800000000123456.789,"dur":2.500,"args":{"layer":"runtime","kernel":"gemm_kernel(float*, int)"}},
{"ph":"X","cat":"cuda_memcpy","name":"cuMemcpyHtoD_v2","pid":4242,"tid":4243,"ts":1800000000123460.000,"dur":1000.001,"args":{"layer":"driver","bytes":4096,"kind":"HtoD_pageable"}},
{"ph":"X","cat":"cuda_alloc","name":"caching_allocator","pid":4242,"tid":4243,"ts":1800000000200000.000,"dur":0.000,"args":{"layer":"framework","bytes":1048576,"address":"0x7f0000001000"}}
]}
)json");
}

TEST(SnoopChromeTraceTest, ParsesBackAsJsonWithTheSameValues) {
  std::vector<RawEvent> events = Events();
  RawEvent other =
      Event(1'800'000'001'000'000'000, 5'000'000, ApiGroup::kSync, "cudaStreamSynchronize");
  other.pid = 99;
  other.tid = 99;
  events.push_back(other);

  nlohmann::json doc =
      nlohmann::json::parse(RenderSnoopChromeTrace(events, Named()), nullptr, false);

  ASSERT_FALSE(doc.is_discarded());
  const nlohmann::json& ev = doc["traceEvents"];
  ASSERT_EQ(ev.size(), 2u + 2u + 4u);                      // two processes, two threads, four calls
  EXPECT_EQ(ev[0]["args"]["name"], "CUDA calls: pid 99");  // Not in the summary.
  EXPECT_EQ(ev[1]["args"]["name"], "CUDA calls: train (4242)");
  const nlohmann::json& sync = ev[7];
  EXPECT_EQ(sync["cat"], "cuda_sync");
  EXPECT_EQ(sync["pid"], 99);
  EXPECT_DOUBLE_EQ(sync["ts"].get<double>(), 1'800'000'001'000'000.0);
  EXPECT_DOUBLE_EQ(sync["dur"].get<double>(), 5000.0);
  EXPECT_EQ(ev[4]["args"]["kernel"], "gemm_kernel(float*, int)");
}

TEST(SnoopChromeTraceTest, NamesAreEscapedAndBadUtf8Replaced) {
  std::vector<RawEvent> events = {Event(1000, 1, ApiGroup::kLaunch, "cuLaunchKernel")};
  events[0].kernel = "k<\"quoted\"\\>\xff";

  nlohmann::json doc =
      nlohmann::json::parse(RenderSnoopChromeTrace(events, SessionSummary{}), nullptr, false);

  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["traceEvents"][2]["args"]["kernel"], "k<\"quoted\"\\>\xEF\xBF\xBD");
  EXPECT_EQ(doc["traceEvents"][2]["ts"], 1.0);
}

TEST(SnoopChromeTraceTest, CategoriesAndLayers) {
  EXPECT_EQ(ApiGroupCategory(ApiGroup::kGraphLaunch), "cuda_graph_launch");
  EXPECT_EQ(ApiGroupCategory(ApiGroup::kFree), "cuda_free");
  EXPECT_EQ(ApiGroupCategory(ApiGroup::kOther), "cuda_api");
  EXPECT_EQ(ApiLayer("cudaMallocAsync"), "runtime");
  EXPECT_EQ(ApiLayer("cuMemCreate"), "driver");
  EXPECT_EQ(ApiLayer("caching_allocator"), "framework");
}

TEST(SnoopChromeTraceTest, NoEventsIsAnEmptyValidTrace) {
  nlohmann::json doc = nlohmann::json::parse(RenderSnoopChromeTrace({}, SessionSummary{}));

  EXPECT_EQ(doc["traceEvents"], nlohmann::json::array());
}

}  // namespace
}  // namespace vigil::snoop
