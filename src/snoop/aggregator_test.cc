// SPDX-License-Identifier: Apache-2.0
#include "snoop/aggregator.h"

#include <gtest/gtest.h>

#include "snoop/cuda_api_table.h"

namespace vigil::snoop {
namespace {

class FakeNames : public NameResolver {
 public:
  std::string KernelName(uint32_t pid, uint32_t api, uint64_t func) override {
    (void)pid;
    (void)api;
    return func == 0x10 ? "gemm" : "softmax";
  }
  CallStack Stack(uint32_t pid, int64_t stack_id) override {
    (void)pid;
    if (stack_id < 0) return {};
    return CallStack{{"frame" + std::to_string(stack_id) + " (exe)", "main (exe)"}};
  }
};

// The table row probing `symbol`.
uint32_t Api(std::string_view symbol) {
  auto apis = CudaApis();
  for (size_t i = 0; i < apis.size(); ++i) {
    if (apis[i].symbol == symbol) return static_cast<uint32_t>(i);
  }
  ADD_FAILURE() << "no row for " << symbol;
  return 0;
}

TEST(Aggregator, LaunchesByNameMostFirstAndGraphsApart) {
  MapContents c;
  c.launches.push_back({{7, Api("cudaLaunchKernel"), 0x10}, 3});
  c.launches.push_back({{7, Api("cudaLaunchKernel"), 0x20}, 5});
  c.launches.push_back({{7, Api("cudaLaunchKernelExC"), 0x10}, 4});  // Same kernel, other API.
  c.launches.push_back({{7, Api("cudaGraphLaunch"), 0}, 2});
  FakeNames names;
  auto out = Aggregate(c, names, {});
  const ProcessSummary& p = out[7];
  EXPECT_EQ(p.pid, 7);
  EXPECT_EQ(p.launches_total, 12u);
  EXPECT_EQ(p.graph_launches, 2u);
  ASSERT_EQ(p.launches_by_kernel.size(), 2u);
  EXPECT_EQ(p.launches_by_kernel[0].name, "gemm");
  EXPECT_EQ(p.launches_by_kernel[0].count, 7u);
  EXPECT_EQ(p.launches_by_kernel[1].name, "softmax");
  EXPECT_EQ(p.launches_by_kernel[1].count, 5u);
}

TEST(Aggregator, SyncsPerApiWithHistogramAndStacks) {
  MapContents c;
  sync_stats st{};
  st.count = 3;
  st.ns = 3'000'000;
  st.hist[20] = 3;  // <= 2^20 ns
  c.syncs.push_back({{7, Api("cudaStreamSynchronize")}, st});
  sync_stats st2{};
  st2.count = 1;
  st2.ns = 500;
  st2.hist[9] = 1;
  c.syncs.push_back({{7, Api("cudaStreamSynchronize_ptsz")}, st2});  // Reported as one API.
  c.sync_stacks.push_back({{7, Api("cudaStreamSynchronize"), 42}, {3, 3'000'000}});
  FakeNames names;
  auto out = Aggregate(c, names, {});
  const ProcessSummary& p = out[7];
  EXPECT_EQ(p.syncs_count, 4u);
  EXPECT_DOUBLE_EQ(p.syncs_seconds, 0.0030005);
  ASSERT_EQ(p.syncs_by_api.size(), 1u);
  EXPECT_EQ(p.syncs_by_api[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(p.syncs_by_api[0].count, 4u);
  ASSERT_EQ(p.syncs_by_api[0].histogram.size(), 2u);
  EXPECT_EQ(p.syncs_by_api[0].histogram[0].upper_ns, 512u);
  EXPECT_EQ(p.syncs_by_api[0].histogram[1].upper_ns, uint64_t{1} << 20);
  EXPECT_EQ(p.syncs_by_api[0].histogram[1].count, 3u);
  ASSERT_EQ(p.syncs_by_stack.size(), 1u);
  EXPECT_EQ(p.syncs_by_stack[0].stack.frames[0], "frame42 (exe)");
}

TEST(Aggregator, MemoryViewsLeaksByAgeAndStackAndPinnedHostApart) {
  MapContents c;
  mem_stats dev{};
  dev.allocations = 4;
  dev.frees = 1;
  dev.current = 3000;
  dev.peak = 4000;
  dev.hist[10] = 4;
  c.memory.push_back({{7, VS_DOMAIN_DEVICE, 0}, dev});
  mem_stats host{};
  host.allocations = 1;
  host.current = 512;
  host.peak = 512;
  c.memory.push_back({{7, VS_DOMAIN_HOST, 0}, host});
  mem_stats fw{};
  fw.allocations = 2;
  fw.current = 100;
  fw.peak = 100;
  c.memory.push_back({{7, VS_DOMAIN_FRAMEWORK, 0}, fw});
  uint32_t malloc_api = Api("cudaMalloc");
  // Two old allocations from stack 5, one young one from stack 6, one old pinned (not a leak).
  c.outstanding.push_back({{7, VS_DOMAIN_DEVICE, 0x1000}, {1000, 100, 5, malloc_api, 0}});
  c.outstanding.push_back({{7, VS_DOMAIN_DEVICE, 0x2000}, {1000, 200, 5, malloc_api, 0}});
  c.outstanding.push_back({{7, VS_DOMAIN_DEVICE, 0x3000}, {1000, 9'000, 6, malloc_api, 0}});
  c.outstanding.push_back({{7, VS_DOMAIN_HOST, 0x4000}, {512, 100, 7, Api("cudaMallocHost"), 0}});
  FakeNames names;
  AggregateOptions o;
  o.now_ns = 10'000;
  o.leak_age_ns = 5'000;
  auto out = Aggregate(c, names, o);
  const ProcessSummary& p = out[7];
  EXPECT_EQ(p.memory.allocations, 4u);
  EXPECT_EQ(p.memory.outstanding_bytes, 3000u);
  EXPECT_EQ(p.memory.peak_bytes, 4000u);
  EXPECT_EQ(p.memory.host_outstanding_bytes, 512u);
  ASSERT_EQ(p.memory.size_histogram.size(), 1u);
  EXPECT_EQ(p.memory.size_histogram[0].upper_bytes, 1024u);
  ASSERT_EQ(p.memory.leaks.size(), 1u);
  EXPECT_EQ(p.memory.leaks[0].bytes, 2000u);
  EXPECT_EQ(p.memory.leaks[0].count, 2u);
  EXPECT_EQ(p.memory.leaks[0].api, "cudaMalloc");
  EXPECT_EQ(p.memory.leaks[0].stack.frames[0], "frame5 (exe)");
  EXPECT_TRUE(p.has_framework_memory);
  EXPECT_EQ(p.framework_memory.outstanding_bytes, 100u);
}

TEST(Aggregator, MemoryPerDeviceSummedIntoTheTotals) {
  MapContents c;
  mem_stats d0{};
  d0.allocations = 3;
  d0.frees = 1;
  d0.current = 2048;
  d0.peak = 3072;
  d0.hist[10] = 3;
  mem_stats d3{};
  d3.allocations = 1;
  d3.current = 4096;
  d3.peak = 4096;
  d3.hist[12] = 1;
  mem_stats f1{};
  f1.allocations = 2;
  f1.frees = 2;
  f1.peak = 512;
  // Device 3 before 0 in map order; the view lists them ascending.
  c.memory.push_back({{7, VS_DOMAIN_DEVICE, 3}, d3});
  c.memory.push_back({{7, VS_DOMAIN_DEVICE, 0}, d0});
  c.memory.push_back({{7, VS_DOMAIN_FRAMEWORK, 1}, f1});
  FakeNames names;
  auto out = Aggregate(c, names, {});
  const ProcessSummary& p = out[7];
  EXPECT_EQ(p.memory.allocations, 4u);
  EXPECT_EQ(p.memory.frees, 1u);
  EXPECT_EQ(p.memory.outstanding_bytes, 6144u);
  EXPECT_EQ(p.memory.peak_bytes, 7168u);
  ASSERT_EQ(p.memory.by_device.size(), 2u);
  EXPECT_EQ(p.memory.by_device[0].device, 0);
  EXPECT_EQ(p.memory.by_device[0].allocations, 3u);
  EXPECT_EQ(p.memory.by_device[0].frees, 1u);
  EXPECT_EQ(p.memory.by_device[0].outstanding_bytes, 2048u);
  EXPECT_EQ(p.memory.by_device[0].peak_bytes, 3072u);
  EXPECT_EQ(p.memory.by_device[1].device, 3);
  EXPECT_EQ(p.memory.by_device[1].outstanding_bytes, 4096u);
  ASSERT_EQ(p.memory.size_histogram.size(), 2u);  // Summed over devices.
  EXPECT_EQ(p.memory.size_histogram[0].upper_bytes, 1024u);
  EXPECT_EQ(p.memory.size_histogram[0].count, 3u);
  EXPECT_EQ(p.memory.size_histogram[1].upper_bytes, 4096u);
  ASSERT_TRUE(p.has_framework_memory);
  ASSERT_EQ(p.framework_memory.by_device.size(), 1u);
  EXPECT_EQ(p.framework_memory.by_device[0].device, 1);
  EXPECT_EQ(p.framework_memory.by_device[0].frees, 2u);
  EXPECT_EQ(p.framework_memory.by_device[0].outstanding_bytes, 0u);
  EXPECT_EQ(p.framework_memory.by_device[0].peak_bytes, 512u);
}

TEST(Aggregator, CopiesNamedByDirectionAndHostMemory) {
  MapContents c;
  c.copies.push_back({{7, VS_COPY_HTOD, VS_HOST_PINNED, {}}, {2, 2000}});
  c.copies.push_back({{7, VS_COPY_DTOD, VS_HOST_NONE, {}}, {1, 64}});
  FakeNames names;
  auto out = Aggregate(c, names, {});
  const auto& copies = out[7].copies;
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].kind, "DtoD");
  EXPECT_EQ(copies[0].bytes, 64u);
  EXPECT_EQ(copies[1].kind, "HtoD_pinned");
  EXPECT_EQ(copies[1].count, 2u);
}

}  // namespace
}  // namespace vigil::snoop
