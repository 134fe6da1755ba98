// SPDX-License-Identifier: Apache-2.0
#include "snoop/cuda_api_table.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace vigil::snoop {
namespace {

TEST(CudaApiTable, SymbolsAreUniqueAndArgumentsInRange) {
  std::set<std::string_view> symbols;
  for (const CudaApi& api : CudaApis()) {
    EXPECT_TRUE(symbols.insert(api.symbol).second) << api.symbol;
    const api_spec& s = api.spec;
    for (int a : {s.arg_func, s.arg_out, s.arg_size, s.arg_addr, s.arg_kind, s.arg_name, s.arg_dst,
                  s.arg_src, s.arg_device}) {
      EXPECT_LE(a, 5) << api.symbol;  // The BPF side reads the first five arguments.
    }
    switch (s.klass) {
      case VS_CLASS_LAUNCH:
        EXPECT_GE(s.arg_func, 1) << api.symbol;
        break;
      case VS_CLASS_ALLOC:
        EXPECT_GE(s.arg_size, 1) << api.symbol;
        if (s.arg_device) {
          EXPECT_TRUE(s.device_bytes == 1 || s.device_bytes == 4) << api.symbol;
        }
        break;
      case VS_CLASS_FREE:
        EXPECT_GE(s.arg_addr, 1) << api.symbol;
        break;
      case VS_CLASS_COPY:
        EXPECT_GE(s.arg_size, 1) << api.symbol;
        break;
      case VS_CLASS_SET_DEVICE:
        EXPECT_EQ(s.arg_device, 1) << api.symbol;
        EXPECT_EQ(s.device_bytes, 4) << api.symbol;
        break;
      case VS_CLASS_CTX_NEW:
        EXPECT_GE(s.arg_out, 1) << api.symbol;
        EXPECT_GE(s.arg_device, 1) << api.symbol;
        break;
      case VS_CLASS_CTX_SET:
        EXPECT_GE(s.arg_addr, 1) << api.symbol;
        break;
      case VS_CLASS_FUNC_NAME:
        EXPECT_GE(s.arg_out, 1) << api.symbol;
        EXPECT_GE(s.arg_name, 1) << api.symbol;
        break;
      default:
        break;
    }
  }
}

TEST(CudaApiTable, EveryIssueApiIsTraced) {
  for (std::string_view name : {"cudaLaunchKernel",
                                "cudaLaunchKernelExC",
                                "cudaLaunchCooperativeKernel",
                                "cuLaunchKernel",
                                "cuLaunchKernelEx",
                                "cudaGraphLaunch",
                                "cuGraphLaunch",
                                "cudaDeviceSynchronize",
                                "cudaStreamSynchronize",
                                "cudaEventSynchronize",
                                "cudaStreamWaitEvent",
                                "cuCtxSynchronize",
                                "cuStreamSynchronize",
                                "cuEventSynchronize",
                                "cudaMalloc",
                                "cudaFree",
                                "cudaMallocAsync",
                                "cudaFreeAsync",
                                "cudaMallocManaged",
                                "cudaMallocHost",
                                "cudaHostAlloc",
                                "cudaFreeHost",
                                "cudaSetDevice",
                                "cuCtxSetCurrent",
                                "cuMemAlloc_v2",
                                "cuMemFree_v2",
                                "cuMemCreate",
                                "cuMemMap",
                                "cuMemUnmap",
                                "cuMemRelease",
                                "cudaMemcpy",
                                "cudaMemcpyAsync",
                                "cuMemcpyHtoD_v2",
                                "cuModuleGetFunction",
                                "cuLibraryGetKernel",
                                "CUDACachingAllocator::malloc",
                                "CUDACachingAllocator::free"}) {
    EXPECT_TRUE(FindCudaApi(name).has_value()) << name;
  }
}

TEST(CudaApiTable, CopyKindsFollowCudaMemcpyKind) {
  EXPECT_EQ(CopyKindName(0), "HtoH");  // cudaMemcpyHostToHost
  EXPECT_EQ(CopyKindName(1), "HtoD");
  EXPECT_EQ(CopyKindName(2), "DtoH");
  EXPECT_EQ(CopyKindName(3), "DtoD");
  EXPECT_EQ(CopyKindName(4), "default");
}

// What the runtime does through the driver is counted once, as the runtime's call; what only
// keeps state (names, devices, contexts, mappings) is followed from the runtime too.
TEST(CudaApiTable, DriverCallsTheRuntimeMakesAreSkippedWhereTheyWouldCountTwice) {
  auto skipped = [](std::string_view name) {
    std::optional<size_t> i = FindCudaApi(name);
    EXPECT_TRUE(i.has_value()) << name;
    return i && SkippedUnderTheRuntime(CudaApis()[*i]);
  };
  for (std::string_view n :
       {"cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch", "cuStreamSynchronize",
        "cuCtxSynchronize", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpy", "cuMemcpyHtoD_v2"}) {
    EXPECT_TRUE(skipped(n)) << n;
  }
  for (std::string_view n :
       {"cuModuleGetFunction", "cuLibraryGetKernel", "cuCtxSetCurrent", "cuDevicePrimaryCtxRetain",
        "cuMemMap", "cuMemUnmap", "cudaLaunchKernel", "cudaMalloc", "cudaStreamSynchronize"}) {
    EXPECT_FALSE(skipped(n)) << n;
  }
  for (const CudaApi& api : CudaApis()) {
    if (api.provider != CudaLibrary::kDriver) {
      EXPECT_FALSE(SkippedUnderTheRuntime(api)) << api.name;
    }
  }
}

}  // namespace
}  // namespace vigil::snoop
