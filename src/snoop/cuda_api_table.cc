// SPDX-License-Identifier: Apache-2.0
#include "snoop/cuda_api_table.h"

#include <array>

namespace vigil::snoop {
namespace {

constexpr api_spec Spec(vs_class klass) {
  api_spec s{};
  s.klass = static_cast<vs_u8>(klass);
  return s;
}
constexpr api_spec Launch(vs_u8 arg_func) {
  api_spec s = Spec(VS_CLASS_LAUNCH);
  s.arg_func = arg_func;
  return s;
}
constexpr api_spec GraphLaunch() { return Spec(VS_CLASS_GRAPH_LAUNCH); }
constexpr api_spec Sync() { return Spec(VS_CLASS_SYNC); }
// out: the T** / handle* argument (0: the return value); rc: the call returns an error code.
constexpr api_spec Alloc(vs_domain domain, vs_u8 out, vs_u8 size, bool rc) {
  api_spec s = Spec(VS_CLASS_ALLOC);
  s.domain = static_cast<vs_u8>(domain);
  s.arg_out = out;
  s.arg_size = size;
  s.check_rc = rc ? 1 : 0;
  return s;
}
constexpr api_spec Free(vs_domain domain, vs_u8 addr) {
  api_spec s = Spec(VS_CLASS_FREE);
  s.domain = static_cast<vs_u8>(domain);
  s.arg_addr = addr;
  return s;
}
// Copies: cudaMemcpy*(dst, src, count, kind) and cuMemcpy*(dst, src, bytes).
constexpr api_spec Copy(vs_u8 kind, vs_u8 size = 3, vs_u8 arg_kind = 0) {
  api_spec s = Spec(VS_CLASS_COPY);
  s.arg_size = size;
  s.arg_kind = arg_kind;
  s.arg_dst = 1;
  s.arg_src = 2;
  s.copy_kind = kind;
  return s;
}
constexpr api_spec FuncName(vs_u8 out, vs_u8 name) {
  api_spec s = Spec(VS_CLASS_FUNC_NAME);
  s.arg_out = out;
  s.arg_name = name;
  s.check_rc = 1;
  return s;
}
// An allocation whose device is argument `device` (`bytes` wide) rather than the thread's.
constexpr api_spec AllocOn(vs_domain domain, vs_u8 out, vs_u8 size, vs_u8 device, vs_u8 bytes) {
  api_spec s = Alloc(domain, out, size, false);
  s.arg_device = device;
  s.device_bytes = bytes;
  return s;
}
// cudaSetDevice(int device): later runtime and driver allocations of the thread go there.
constexpr api_spec SetDevice() {
  api_spec s = Spec(VS_CLASS_SET_DEVICE);
  s.arg_device = 1;
  s.device_bytes = 4;
  s.check_rc = 1;
  return s;
}
// A call that creates or retains a CUcontext (written through `out`) on device `device`.
constexpr api_spec CtxNew(vs_u8 out, vs_u8 device, bool make_current) {
  api_spec s = Spec(VS_CLASS_CTX_NEW);
  s.arg_out = out;
  s.arg_device = device;
  s.device_bytes = 4;
  s.check_rc = 1;
  s.make_current = make_current ? 1 : 0;
  return s;
}
// cuCtxSetCurrent(CUcontext ctx): the thread's allocations go to the context's device.
constexpr api_spec CtxSet() {
  api_spec s = Spec(VS_CLASS_CTX_SET);
  s.arg_addr = 1;
  return s;
}
// cuMemMap / cuMemUnmap: bytes in the second argument.
constexpr api_spec MapCall(vs_class klass) {
  api_spec s = Spec(klass);
  s.arg_size = 2;
  return s;
}

constexpr CudaLibrary kRt = CudaLibrary::kRuntime;
constexpr CudaLibrary kDrv = CudaLibrary::kDriver;
constexpr CudaLibrary kC10 = CudaLibrary::kCachingAllocator;

#define VS_C10_ALLOCATOR "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator"

// Prototypes (CUDA Runtime / Driver API reference) in the comments where the argument
// positions are not the obvious ones. _ptsz: the per-thread-default-stream variants.
constexpr auto kApis = std::to_array<CudaApi>({
    // cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shmem,
    //                  cudaStream_t stream)
    {"cudaLaunchKernel", "cudaLaunchKernel", kRt, Launch(1)},
    {"cudaLaunchKernel_ptsz", "cudaLaunchKernel", kRt, Launch(1)},
    // cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args)
    {"cudaLaunchKernelExC", "cudaLaunchKernelExC", kRt, Launch(2)},
    {"cudaLaunchKernelExC_ptsz", "cudaLaunchKernelExC", kRt, Launch(2)},
    {"cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel", kRt, Launch(1)},
    {"cudaLaunchCooperativeKernel_ptsz", "cudaLaunchCooperativeKernel", kRt, Launch(1)},
    {"cudaGraphLaunch", "cudaGraphLaunch", kRt, GraphLaunch()},
    {"cudaGraphLaunch_ptsz", "cudaGraphLaunch", kRt, GraphLaunch()},
    {"cudaDeviceSynchronize", "cudaDeviceSynchronize", kRt, Sync()},
    {"cudaStreamSynchronize", "cudaStreamSynchronize", kRt, Sync()},
    {"cudaStreamSynchronize_ptsz", "cudaStreamSynchronize", kRt, Sync()},
    {"cudaEventSynchronize", "cudaEventSynchronize", kRt, Sync()},
    {"cudaStreamWaitEvent", "cudaStreamWaitEvent", kRt, Sync()},
    {"cudaStreamWaitEvent_ptsz", "cudaStreamWaitEvent", kRt, Sync()},
    // cudaMalloc(void** devPtr, size_t size); the others add flags or a stream after size.
    {"cudaMalloc", "cudaMalloc", kRt, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cudaMallocAsync", "cudaMallocAsync", kRt, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cudaMallocAsync_ptsz", "cudaMallocAsync", kRt, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cudaMallocManaged", "cudaMallocManaged", kRt, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cudaMallocHost", "cudaMallocHost", kRt, Alloc(VS_DOMAIN_HOST, 1, 2, true)},
    {"cudaHostAlloc", "cudaHostAlloc", kRt, Alloc(VS_DOMAIN_HOST, 1, 2, true)},
    {"cudaFree", "cudaFree", kRt, Free(VS_DOMAIN_DEVICE, 1)},
    {"cudaFreeAsync", "cudaFreeAsync", kRt, Free(VS_DOMAIN_DEVICE, 1)},
    {"cudaFreeAsync_ptsz", "cudaFreeAsync", kRt, Free(VS_DOMAIN_DEVICE, 1)},
    {"cudaFreeHost", "cudaFreeHost", kRt, Free(VS_DOMAIN_HOST, 1)},
    // cudaSetDevice(int device)
    {"cudaSetDevice", "cudaSetDevice", kRt, SetDevice()},
    // cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind)
    {"cudaMemcpy", "cudaMemcpy", kRt, Copy(VS_COPY_FROM_ARG, 3, 4)},
    {"cudaMemcpy_ptds", "cudaMemcpy", kRt, Copy(VS_COPY_FROM_ARG, 3, 4)},
    {"cudaMemcpyAsync", "cudaMemcpyAsync", kRt, Copy(VS_COPY_FROM_ARG, 3, 4)},
    {"cudaMemcpyAsync_ptsz", "cudaMemcpyAsync", kRt, Copy(VS_COPY_FROM_ARG, 3, 4)},
    // Runtime copies that go through the driver's traced copies, so that those, skipped under
    // the runtime, are counted here: cudaMemcpyPeer(void* dst, int dstDevice, const void* src,
    // int srcDevice, size_t count) (and Async, + stream);
    // cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
    // cudaMemcpyKind kind); cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count,
    // size_t offset, cudaMemcpyKind kind) (and Async, + stream).
    {"cudaMemcpyPeer", "cudaMemcpyPeer", kRt, Copy(VS_COPY_DTOD, 5)},
    {"cudaMemcpyPeerAsync", "cudaMemcpyPeerAsync", kRt, Copy(VS_COPY_DTOD, 5)},
    {"cudaMemcpyToSymbol", "cudaMemcpyToSymbol", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyToSymbol_ptds", "cudaMemcpyToSymbol", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyToSymbolAsync", "cudaMemcpyToSymbolAsync", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyToSymbolAsync_ptsz", "cudaMemcpyToSymbolAsync", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyFromSymbol", "cudaMemcpyFromSymbol", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyFromSymbol_ptds", "cudaMemcpyFromSymbol", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyFromSymbolAsync", "cudaMemcpyFromSymbolAsync", kRt, Copy(VS_COPY_FROM_ARG, 3, 5)},
    {"cudaMemcpyFromSymbolAsync_ptsz", "cudaMemcpyFromSymbolAsync", kRt,
     Copy(VS_COPY_FROM_ARG, 3, 5)},

    // cuLaunchKernel(CUfunction f, unsigned gridDimX, ..., CUstream hStream, void** params,
    //                void** extra)
    {"cuLaunchKernel", "cuLaunchKernel", kDrv, Launch(1)},
    {"cuLaunchKernel_ptsz", "cuLaunchKernel", kDrv, Launch(1)},
    // cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra)
    {"cuLaunchKernelEx", "cuLaunchKernelEx", kDrv, Launch(2)},
    {"cuLaunchKernelEx_ptsz", "cuLaunchKernelEx", kDrv, Launch(2)},
    {"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", kDrv, Launch(1)},
    {"cuGraphLaunch", "cuGraphLaunch", kDrv, GraphLaunch()},
    {"cuGraphLaunch_ptsz", "cuGraphLaunch", kDrv, GraphLaunch()},
    {"cuCtxSynchronize", "cuCtxSynchronize", kDrv, Sync()},
    {"cuStreamSynchronize", "cuStreamSynchronize", kDrv, Sync()},
    {"cuStreamSynchronize_ptsz", "cuStreamSynchronize", kDrv, Sync()},
    {"cuEventSynchronize", "cuEventSynchronize", kDrv, Sync()},
    {"cuStreamWaitEvent", "cuStreamWaitEvent", kDrv, Sync()},
    // cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev); cuCtxCreate_v2(CUcontext* pctx,
    // unsigned int flags, CUdevice dev), which also makes it current; cuCtxSetCurrent(ctx).
    {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", kDrv, CtxNew(1, 2, false)},
    {"cuCtxCreate_v2", "cuCtxCreate_v2", kDrv, CtxNew(1, 3, true)},
    {"cuCtxSetCurrent", "cuCtxSetCurrent", kDrv, CtxSet()},
    // cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize); cuMemFree_v2(CUdeviceptr dptr)
    {"cuMemAlloc_v2", "cuMemAlloc_v2", kDrv, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cuMemAlloc", "cuMemAlloc", kDrv, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cuMemAllocManaged", "cuMemAllocManaged", kDrv, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cuMemAllocAsync", "cuMemAllocAsync", kDrv, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cuMemFree_v2", "cuMemFree_v2", kDrv, Free(VS_DOMAIN_DEVICE, 1)},
    {"cuMemFree", "cuMemFree", kDrv, Free(VS_DOMAIN_DEVICE, 1)},
    {"cuMemFreeAsync", "cuMemFreeAsync", kDrv, Free(VS_DOMAIN_DEVICE, 1)},
    // cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
    //             const CUmemAllocationProp* prop, unsigned long long flags): physical memory,
    // held until cuMemRelease(handle); the handle stands for the address.
    {"cuMemCreate", "cuMemCreate", kDrv, Alloc(VS_DOMAIN_DEVICE, 1, 2, true)},
    {"cuMemRelease", "cuMemRelease", kDrv, Free(VS_DOMAIN_DEVICE, 1)},
    // cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, handle, flags);
    // cuMemUnmap(CUdeviceptr ptr, size_t size)
    {"cuMemMap", "cuMemMap", kDrv, MapCall(VS_CLASS_MAP)},
    {"cuMemUnmap", "cuMemUnmap", kDrv, MapCall(VS_CLASS_UNMAP)},
    // cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount): unified addressing.
    {"cuMemcpy", "cuMemcpy", kDrv, Copy(VS_COPY_DEFAULT)},
    {"cuMemcpyAsync", "cuMemcpyAsync", kDrv, Copy(VS_COPY_DEFAULT)},
    {"cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", kDrv, Copy(VS_COPY_HTOD)},
    {"cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2", kDrv, Copy(VS_COPY_HTOD)},
    {"cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", kDrv, Copy(VS_COPY_DTOH)},
    {"cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2", kDrv, Copy(VS_COPY_DTOH)},
    {"cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2", kDrv, Copy(VS_COPY_DTOD)},
    {"cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2", kDrv, Copy(VS_COPY_DTOD)},
    {"cuMemcpyHtoH_v2", "cuMemcpyHtoH_v2", kDrv, Copy(VS_COPY_HTOH)},
    // cuMemcpyPeer(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx,
    //              size_t ByteCount)
    {"cuMemcpyPeer", "cuMemcpyPeer", kDrv, Copy(VS_COPY_DTOD, 5)},
    // cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name);
    // cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name)
    {"cuModuleGetFunction", "cuModuleGetFunction", kDrv, FuncName(1, 3)},
    {"cuLibraryGetKernel", "cuLibraryGetKernel", kDrv, FuncName(1, 3)},

    // c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator (member functions: the
    // first argument is `this`). malloc(void** devPtr, c10::DeviceIndex device, size_t size,
    // cudaStream_t stream); PyTorch before 2.1 had `int device`.
    {VS_C10_ALLOCATOR "6mallocEPPvamP11CUstream_st", "CUDACachingAllocator::malloc", kC10,
     AllocOn(VS_DOMAIN_FRAMEWORK, 2, 4, 3, 1)},
    {VS_C10_ALLOCATOR "6mallocEPPvimP11CUstream_st", "CUDACachingAllocator::malloc", kC10,
     AllocOn(VS_DOMAIN_FRAMEWORK, 2, 4, 3, 4)},
    {VS_C10_ALLOCATOR "4freeEPv", "CUDACachingAllocator::free", kC10, Free(VS_DOMAIN_FRAMEWORK, 2)},
    // void* raw_alloc(size_t nbytes); raw_alloc_with_stream(size_t nbytes, cudaStream_t)
    {VS_C10_ALLOCATOR "9raw_allocEm", "CUDACachingAllocator::raw_alloc", kC10,
     Alloc(VS_DOMAIN_FRAMEWORK, 0, 2, false)},
    {VS_C10_ALLOCATOR "21raw_alloc_with_streamEmP11CUstream_st", "CUDACachingAllocator::raw_alloc",
     kC10, Alloc(VS_DOMAIN_FRAMEWORK, 0, 2, false)},
    {VS_C10_ALLOCATOR "10raw_deleteEPv", "CUDACachingAllocator::raw_delete", kC10,
     Free(VS_DOMAIN_FRAMEWORK, 2)},
});
static_assert(kApis.size() <= VS_MAX_APIS, "raise VS_MAX_APIS in cuda_probes.h");

#undef VS_C10_ALLOCATOR

}  // namespace

std::span<const CudaApi> CudaApis() { return kApis; }

std::optional<size_t> FindCudaApi(std::string_view name) {
  for (size_t i = 0; i < kApis.size(); ++i) {
    if (kApis[i].name == name) return i;
  }
  return std::nullopt;
}

bool SkippedUnderTheRuntime(const CudaApi& api) {
  if (api.provider != CudaLibrary::kDriver) return false;
  switch (api.spec.klass) {
    case VS_CLASS_LAUNCH:
    case VS_CLASS_GRAPH_LAUNCH:
    case VS_CLASS_SYNC:
    case VS_CLASS_COPY:
    case VS_CLASS_ALLOC:
    case VS_CLASS_FREE:
      return true;
    default:
      return false;
  }
}

ApiGroup GroupOfClass(int klass) {
  switch (klass) {
    case VS_CLASS_LAUNCH:
      return ApiGroup::kLaunch;
    case VS_CLASS_GRAPH_LAUNCH:
      return ApiGroup::kGraphLaunch;
    case VS_CLASS_SYNC:
      return ApiGroup::kSync;
    case VS_CLASS_ALLOC:
      return ApiGroup::kAlloc;
    case VS_CLASS_FREE:
      return ApiGroup::kFree;
    case VS_CLASS_COPY:
      return ApiGroup::kCopy;
    default:
      return ApiGroup::kOther;
  }
}

std::string_view CopyKindName(int kind) {
  switch (kind) {
    case VS_COPY_HTOH:
      return "HtoH";
    case VS_COPY_HTOD:
      return "HtoD";
    case VS_COPY_DTOH:
      return "DtoH";
    case VS_COPY_DTOD:
      return "DtoD";
    default:
      return "default";
  }
}

}  // namespace vigil::snoop
