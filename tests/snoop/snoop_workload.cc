// SPDX-License-Identifier: Apache-2.0
// A CUDA program in miniature for vigil snoop's tests, run against the fake runtime, driver and
// caching allocator (dynamically, or with the runtime linked in statically). It says "ready",
// waits for "run" on stdin, makes exactly the calls of workload_plan.h (or a launch loop for
// the benchmark), says "done", and exits on "exit" or end of input. No sleeps: the test drives
// every step. The prototypes are NVIDIA's documented ones, declared here, not from our headers.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "workload_plan.h"

extern "C" {
typedef int cudaError_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
typedef struct cudaLaunchConfig_st cudaLaunchConfig_t;
struct dim3 {
  unsigned int x, y, z;
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args);
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        size_t sharedMem, cudaStream_t stream);
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaMalloc(void** devPtr, size_t size);
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags);
cudaError_t cudaMallocHost(void** ptr, size_t size);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags);
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count);
cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 cudaMemcpyKind kind);

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUfunc_st* CUfunction;
typedef struct CUkern_st* CUkernel;
typedef struct CUmod_st* CUmodule;
typedef struct CUlib_st* CUlibrary;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUlaunchConfig_st CUlaunchConfig;
typedef struct CUmemAllocationProp_st CUmemAllocationProp;
CUresult cuInit(unsigned int Flags);
CUresult cuModuleLoadData(CUmodule* module, const void* image);
CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name);
CUresult cuLibraryLoadData(CUlibrary* library, const void* code, int* jitOptions,
                           void** jitOptionsValues, unsigned int numJitOptions, int* libraryOptions,
                           void** libraryOptionValues, unsigned int numLibraryOptions);
CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void** kernelParams, void** extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                          void** extra);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuCtxSynchronize(void);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize);
typedef struct CUctx_st* CUcontext;
CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, int dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount);
CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
}

#ifndef WORKLOAD_STATIC_CUDART
// PyTorch's caching allocator, as libc10_cuda.so exports it.
namespace c10 {
using DeviceIndex = int8_t;
namespace cuda::CUDACachingAllocator::Native {
class NativeCachingAllocator {
 public:
  void malloc(void** devPtr, c10::DeviceIndex device, size_t size, CUstream_st* stream);
  void free(void* ptr);
  void* raw_alloc(size_t nbytes);
  void raw_delete(void* ptr);
};
}  // namespace cuda::CUDACachingAllocator::Native
}  // namespace c10
#endif

#define NOINLINE __attribute__((noinline))

// Host stubs: what nvcc generates for each __global__ function; snoop names launches by them.
namespace kernels {
NOINLINE void gemm_bf16(float* out) { asm volatile("" ::"r"(out)); }
template <typename T>
NOINLINE void softmax(T* x, int n) {
  asm volatile("" ::"r"(x), "r"(n));
}
template void softmax<float>(float*, int);
NOINLINE void layer_norm(float* x) { asm volatile("" ::"r"(x)); }
NOINLINE void reduce(double* x) { asm volatile("" ::"r"(x)); }
}  // namespace kernels

namespace {

void Check(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "workload: %s failed: %d\n", what, rc);
    std::exit(2);
  }
}

const dim3 kGrid{4, 1, 1};
const dim3 kBlock{128, 1, 1};
cudaGraphExec_t FakeGraph() { return reinterpret_cast<cudaGraphExec_t>(0x1234); }

NOINLINE void launch_runtime_kernels() {
  float buf[4] = {};
  void* args[] = {buf};
  for (int i = 0; i < vigil::snoop::plan::kGemmLaunches; ++i) {
    Check(cudaLaunchKernel(reinterpret_cast<const void*>(&kernels::gemm_bf16), kGrid, kBlock, args,
                           0, nullptr),
          "cudaLaunchKernel");
  }
  for (int i = 0; i < vigil::snoop::plan::kSoftmaxLaunches; ++i) {
    Check(cudaLaunchKernel(reinterpret_cast<const void*>(&kernels::softmax<float>), kGrid, kBlock,
                           args, 0, nullptr),
          "cudaLaunchKernel");
  }
  for (int i = 0; i < vigil::snoop::plan::kLayerNormLaunches; ++i) {
    Check(cudaLaunchKernelExC(nullptr, reinterpret_cast<const void*>(&kernels::layer_norm), args),
          "cudaLaunchKernelExC");
  }
  for (int i = 0; i < vigil::snoop::plan::kReduceLaunches; ++i) {
    Check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&kernels::reduce), kGrid,
                                      kBlock, args, 0, nullptr),
          "cudaLaunchCooperativeKernel");
  }
  for (int i = 0; i < vigil::snoop::plan::kRuntimeGraphLaunches; ++i) {
    Check(cudaGraphLaunch(FakeGraph(), nullptr), "cudaGraphLaunch");
  }
}

NOINLINE void launch_driver_kernels() {
  using namespace vigil::snoop::plan;
  static const char kImage[] = "fake cubin";
  CUmodule module = nullptr;
  Check(cuInit(0), "cuInit");
  Check(cuModuleLoadData(&module, kImage), "cuModuleLoadData");
  CUfunction triton = nullptr;
  CUfunction rmsnorm = nullptr;
  Check(cuModuleGetFunction(&triton, module, kTritonName), "cuModuleGetFunction");
  Check(cuModuleGetFunction(&rmsnorm, module, kRmsNormMangled), "cuModuleGetFunction");
  CUlibrary library = nullptr;
  Check(cuLibraryLoadData(&library, kImage, nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cuLibraryLoadData");
  CUkernel flash = nullptr;
  Check(cuLibraryGetKernel(&flash, library, kFlashName), "cuLibraryGetKernel");
  for (int i = 0; i < kTritonLaunches; ++i) {
    Check(cuLaunchKernel(triton, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr),
          "cuLaunchKernel");
  }
  for (int i = 0; i < kRmsNormLaunches; ++i) {
    Check(cuLaunchKernelEx(nullptr, rmsnorm, nullptr, nullptr), "cuLaunchKernelEx");
  }
  for (int i = 0; i < kFlashLaunches; ++i) {
    Check(cuLaunchKernel(reinterpret_cast<CUfunction>(flash), 1, 1, 1, 32, 1, 1, 0, nullptr,
                         nullptr, nullptr),
          "cuLaunchKernel");
  }
  for (int i = 0; i < kDriverGraphLaunches; ++i) {
    Check(cuGraphLaunch(reinterpret_cast<CUgraphExec>(0x5678), nullptr), "cuGraphLaunch");
  }
}

NOINLINE void wait_for_gpu() {
  for (int i = 0; i < vigil::snoop::plan::kDeviceSyncs; ++i) {
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
}

NOINLINE void synchronise() {
  using namespace vigil::snoop::plan;
  wait_for_gpu();
  auto* event = reinterpret_cast<cudaEvent_t>(0x99);
  for (int i = 0; i < kStreamSyncs; ++i) Check(cudaStreamSynchronize(nullptr), "sync");
  for (int i = 0; i < kEventSyncs; ++i) Check(cudaEventSynchronize(event), "sync");
  for (int i = 0; i < kStreamWaits; ++i) Check(cudaStreamWaitEvent(nullptr, event, 0), "wait");
  for (int i = 0; i < kCtxSyncs; ++i) Check(cuCtxSynchronize(), "sync");
  for (int i = 0; i < kCuStreamSyncs; ++i) Check(cuStreamSynchronize(nullptr), "sync");
  for (int i = 0; i < kCuEventSyncs; ++i) Check(cuEventSynchronize(event), "sync");
}

NOINLINE void leak_activations() {
  for (int i = 0; i < vigil::snoop::plan::kLeakedActivations; ++i) {
    void* p = nullptr;
    Check(cudaMalloc(&p, vigil::snoop::plan::kActivationBytes), "cudaMalloc");
  }
}

NOINLINE void temp_buffers() {
  using namespace vigil::snoop::plan;
  std::vector<void*> bufs(kTempBuffers);
  for (void*& p : bufs) Check(cudaMalloc(&p, kTempBytes), "cudaMalloc");
  for (void* p : bufs) Check(cudaFree(p), "cudaFree");
  void* a[kAsyncBuffers];
  for (void*& p : a) Check(cudaMallocAsync(&p, kAsyncBytes, nullptr), "cudaMallocAsync");
  for (void* p : a) Check(cudaFreeAsync(p, nullptr), "cudaFreeAsync");
  void* managed = nullptr;
  Check(cudaMallocManaged(&managed, kManagedBytes, 1), "cudaMallocManaged");
  Check(cudaFree(managed), "cudaFree");
}

NOINLINE void driver_leak(CUdeviceptr* kept) {
  Check(cuMemAlloc_v2(kept, vigil::snoop::plan::kDriverBytes), "cuMemAlloc_v2");
}

NOINLINE void driver_memory() {
  using namespace vigil::snoop::plan;
  CUdeviceptr freed = 0;
  Check(cuMemAlloc_v2(&freed, kDriverBytes), "cuMemAlloc_v2");
  CUdeviceptr kept = 0;
  driver_leak(&kept);
  Check(cuMemFree_v2(freed), "cuMemFree_v2");
  CUmemGenericAllocationHandle handle = 0;
  Check(cuMemCreate(&handle, kVmmBytes, nullptr, 0), "cuMemCreate");
  CUdeviceptr va = 0x7c0000000000ull;
  Check(cuMemMap(va, kVmmBytes, 0, handle, 0), "cuMemMap");
  Check(cuMemUnmap(va, kVmmBytes), "cuMemUnmap");
  Check(cuMemRelease(handle), "cuMemRelease");
}

// On device 1, then back on device 0 (the numbers in workload_plan.h).
NOINLINE void second_device() {
  using namespace vigil::snoop::plan;
  Check(cudaSetDevice(1), "cudaSetDevice");
  void* temp = nullptr;
  Check(cudaMalloc(&temp, kDevice1TempBytes), "cudaMalloc");
  void* kept = nullptr;
  Check(cudaMalloc(&kept, kDevice1Bytes), "cudaMalloc");
  Check(cudaFree(temp), "cudaFree");
  Check(cudaSetDevice(0), "cudaSetDevice");
  // The driver's way: device 1's primary context made current, then device 0's again.
  CUcontext ctx0 = nullptr;
  CUcontext ctx1 = nullptr;
  Check(cuDevicePrimaryCtxRetain(&ctx0, 0), "cuDevicePrimaryCtxRetain");
  Check(cuDevicePrimaryCtxRetain(&ctx1, 1), "cuDevicePrimaryCtxRetain");
  Check(cuCtxSetCurrent(ctx1), "cuCtxSetCurrent");
  CUdeviceptr driver_kept = 0;
  Check(cuMemAlloc_v2(&driver_kept, kDriverDevice1Bytes), "cuMemAlloc_v2");
  Check(cuCtxSetCurrent(ctx0), "cuCtxSetCurrent");
}

NOINLINE void copies() {
  using namespace vigil::snoop::plan;
  void* pinned = nullptr;
  void* host_alloc = nullptr;
  Check(cudaMallocHost(&pinned, kPinnedBytes), "cudaMallocHost");
  Check(cudaHostAlloc(&host_alloc, kHostAllocBytes, 0), "cudaHostAlloc");
  std::vector<char> pageable(8192);
  void* dev = nullptr;
  Check(cudaMalloc(&dev, kTempBytes), "cudaMalloc");
  for (int i = 0; i < kHtoDPinned; ++i)
    Check(cudaMemcpy(dev, pinned, 1000, cudaMemcpyHostToDevice), "memcpy");
  for (int i = 0; i < kHtoDPageableRuntime; ++i) {
    Check(cudaMemcpy(dev, pageable.data(), 500, cudaMemcpyHostToDevice), "memcpy");
  }
  for (int i = 0; i < kHtoDPageableDriver; ++i) {
    Check(cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(dev), pageable.data(), 100), "cuMemcpy");
  }
  for (int i = 0; i < kDtoHPageable; ++i) {
    Check(cudaMemcpyAsync(pageable.data(), dev, 256, cudaMemcpyDeviceToHost, nullptr), "memcpy");
  }
  for (int i = 0; i < kDtoHPinned; ++i) {
    Check(cuMemcpyDtoH_v2(host_alloc, reinterpret_cast<CUdeviceptr>(dev), 300), "cuMemcpy");
  }
  for (int i = 0; i < kDtoDRuntime; ++i)
    Check(cudaMemcpy(dev, dev, 4096, cudaMemcpyDeviceToDevice), "memcpy");
  for (int i = 0; i < kDtoDDriver; ++i) {
    Check(
        cuMemcpyDtoD_v2(reinterpret_cast<CUdeviceptr>(dev), reinterpret_cast<CUdeviceptr>(dev), 50),
        "cuMemcpy");
  }
  for (int i = 0; i < kPeer; ++i) Check(cudaMemcpyPeer(dev, 1, dev, 0, 2048), "memcpyPeer");
  for (int i = 0; i < kToSymbol; ++i) {
    Check(cudaMemcpyToSymbol(dev, pageable.data(), 64, 0, cudaMemcpyHostToDevice), "toSymbol");
  }
  for (int i = 0; i < kFromSymbol; ++i) {
    Check(cudaMemcpyFromSymbol(pageable.data(), dev, 32, 0, cudaMemcpyDeviceToHost), "fromSymbol");
  }
  for (int i = 0; i < kDefault; ++i) Check(cudaMemcpy(dev, dev, 77, cudaMemcpyDefault), "memcpy");
  for (int i = 0; i < kHtoH; ++i) {
    Check(cudaMemcpy(pageable.data(), pageable.data() + 100, 10, cudaMemcpyHostToHost), "memcpy");
  }
  Check(cudaFree(dev), "cudaFree");
  Check(cudaFreeHost(pinned), "cudaFreeHost");
  Check(cudaFreeHost(host_alloc), "cudaFreeHost");
}

#ifndef WORKLOAD_STATIC_CUDART
NOINLINE void framework_allocs() {
  c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator allocator;
  void* blocks[6];
  for (void*& p : blocks) allocator.malloc(&p, 0, 1000, nullptr);
  for (int i = 0; i < 4; ++i) allocator.free(blocks[i]);
  void* raw1 = allocator.raw_alloc(3000);
  void* raw2 = allocator.raw_alloc(3000);
  allocator.raw_delete(raw1);
  (void)raw2;
  void* on1[vigil::snoop::plan::kFrameworkDevice1Allocations];
  for (void*& p : on1) allocator.malloc(&p, 1, 1000, nullptr);
  allocator.free(on1[0]);
}
#endif

void RunAll() {
  launch_runtime_kernels();
  launch_driver_kernels();
  synchronise();
  leak_activations();
  temp_buffers();
  driver_memory();
  second_device();
#ifndef WORKLOAD_STATIC_CUDART
  framework_allocs();
#endif
  copies();
}

// `count` launches as fast as possible; prints the nanoseconds they took.
void LaunchLoop(long count) {
  float buf[4] = {};
  void* args[] = {buf};
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) {
    cudaLaunchKernel(reinterpret_cast<const void*>(&kernels::gemm_bf16), kGrid, kBlock, args, 0,
                     nullptr);
  }
  auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("ns %lld\n", static_cast<long long>(ns));
}

// `rate` launches per second for `seconds`, paced on the clock (busy between launches, as a
// launch-bound training loop is); prints how many it made. For the collector's cost benchmark.
void PacedLoop(long rate, double seconds) {
  float buf[4] = {};
  void* args[] = {buf};
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  const std::chrono::duration<double> gap(1.0 / static_cast<double>(std::max(rate, 1L)));
  long made = 0;
  for (auto next = start; next < end; next += std::chrono::duration_cast<Clock::duration>(gap)) {
    while (Clock::now() < next) {
    }
    cudaLaunchKernel(reinterpret_cast<const void*>(&kernels::gemm_bf16), kGrid, kBlock, args, 0,
                     nullptr);
    ++made;
  }
  std::printf("launches %ld\n", made);
}

bool ReadLine(std::string* line) {
  line->clear();
  char c;
  while (true) {
    ssize_t n = read(0, &c, 1);
    if (n <= 0) return !line->empty();
    if (c == '\n') return true;
    if (line->size() < 256) line->push_back(c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc > 1 && std::strcmp(argv[1], "--auto") == 0) {  // Run once and exit: no dialogue.
    RunAll();
    return 0;
  }
  std::printf("ready %d\n", static_cast<int>(getpid()));
  std::string line;
  while (ReadLine(&line)) {
    if (line == "run") {
      RunAll();
    } else if (line.rfind("loop ", 0) == 0) {
      LaunchLoop(std::strtol(line.c_str() + 5, nullptr, 10));
    } else if (line.rfind("pace ", 0) == 0) {  // "pace RATE SECONDS"
      char* rest = nullptr;
      const long rate = std::strtol(line.c_str() + 5, &rest, 10);
      PacedLoop(rate, std::strtod(rest, nullptr));
    } else if (line == "exit") {
      break;
    } else {
      std::fprintf(stderr, "workload: unknown command '%s'\n", line.c_str());
      return 2;
    }
    std::printf("done\n");
  }
  return 0;
}
