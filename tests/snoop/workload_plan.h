// SPDX-License-Identifier: Apache-2.0
// The calls snoop_workload makes in its "all" scenario, in numbers the integration tests check
// the probes' counts against. Shared by the workload and the tests so both read one plan.
#pragma once

#include <cstddef>

namespace vigil::snoop::plan {

// Runtime launches through host stubs (kernels::gemm_bf16 etc. in the workload).
inline constexpr int kGemmLaunches = 7;       // cudaLaunchKernel(kernels::gemm_bf16)
inline constexpr int kSoftmaxLaunches = 3;    // cudaLaunchKernel(kernels::softmax<float>)
inline constexpr int kLayerNormLaunches = 2;  // cudaLaunchKernelExC(kernels::layer_norm)
inline constexpr int kReduceLaunches = 1;     // cudaLaunchCooperativeKernel(kernels::reduce)
// Driver launches through names from cuModuleGetFunction / cuLibraryGetKernel.
inline constexpr const char* kTritonName = "triton_matmul_kernel";
inline constexpr int kTritonLaunches = 5;  // cuLaunchKernel
inline constexpr const char* kRmsNormMangled = "_Z13fused_rmsnormPfi";
inline constexpr const char* kRmsNormDemangled = "fused_rmsnorm(float*, int)";
inline constexpr int kRmsNormLaunches = 4;  // cuLaunchKernelEx
inline constexpr const char* kFlashName = "flash_attn_fwd";
inline constexpr int kFlashLaunches = 2;         // cuLaunchKernel on a CUkernel
inline constexpr int kRuntimeGraphLaunches = 2;  // cudaGraphLaunch
inline constexpr int kDriverGraphLaunches = 1;   // cuGraphLaunch

inline constexpr int kLaunchesTotal = kGemmLaunches + kSoftmaxLaunches + kLayerNormLaunches +
                                      kReduceLaunches + kTritonLaunches + kRmsNormLaunches +
                                      kFlashLaunches;

// Syncs; each fake sync sleeps FAKE_CUDA_SYNC_US (the tests set kSyncMicros).
inline constexpr int kSyncMicros = 2000;
inline constexpr int kDeviceSyncs = 4;  // cudaDeviceSynchronize, from wait_for_gpu()
inline constexpr int kStreamSyncs = 3;  // cudaStreamSynchronize
inline constexpr int kEventSyncs = 2;   // cudaEventSynchronize
inline constexpr int kStreamWaits = 1;  // cudaStreamWaitEvent
inline constexpr int kCtxSyncs = 2;     // cuCtxSynchronize
inline constexpr int kCuStreamSyncs = 1;
inline constexpr int kCuEventSyncs = 1;
inline constexpr int kSyncsTotal = kDeviceSyncs + kStreamSyncs + kEventSyncs + kStreamWaits +
                                   kCtxSyncs + kCuStreamSyncs + kCuEventSyncs;

// Device memory (driver view), all on device 0 except the second_device() figures below.
inline constexpr int kLeakedActivations = 3;  // cudaMalloc in leak_activations(), never freed
inline constexpr size_t kActivationBytes = 1 << 20;
inline constexpr int kTempBuffers = 5;  // cudaMalloc + cudaFree in temp_buffers()
inline constexpr size_t kTempBytes = 4096;
inline constexpr int kAsyncBuffers = 2;  // cudaMallocAsync + cudaFreeAsync
inline constexpr size_t kAsyncBytes = 8192;
inline constexpr size_t kManagedBytes = 65536;    // cudaMallocManaged + cudaFree
inline constexpr size_t kDriverBytes = 32768;     // 2 x cuMemAlloc_v2; one freed, one leaked
                                                  // in driver_leak()
inline constexpr size_t kVmmBytes = 2 << 20;      // cuMemCreate + cuMemMap + cuMemUnmap + release
inline constexpr size_t kSegmentBytes = 2 << 20;  // The fake caching allocator's one segment
// Allocations: 3 + 5 + 2 + 1 + 2 + 1 + 1 (segment) + 1 (copies' device buffer of kTempBytes);
// frees: 5 + 2 + 1 + 1 + 1 + 1. A static-cudart workload has no caching allocator (no segment).
inline constexpr int kDeviceAllocations = 16;
inline constexpr int kDeviceFrees = 11;
inline constexpr size_t kDeviceOutstanding =
    kLeakedActivations * kActivationBytes + kDriverBytes + kSegmentBytes;
// The peak: everything outstanding plus the copies' buffer (the VMM allocation is released
// before the segment is taken, and is the same size).
inline constexpr size_t kDevicePeak = kDeviceOutstanding + kTempBytes;

// Device 1 (second_device(), after cudaSetDevice(1)): a temporary cudaMalloc freed after a kept
// one; then, with device 1's primary context current (cuCtxSetCurrent), a kept cuMemAlloc_v2;
// the caching allocator then takes a segment there for its device-1 blocks.
inline constexpr size_t kDevice1TempBytes = 65536;
inline constexpr size_t kDevice1Bytes = 262144;
inline constexpr size_t kDriverDevice1Bytes = 16384;
inline constexpr int kDevice1Allocations = 3;  // Plus the segment with the caching allocator.
inline constexpr int kDevice1Frees = 1;
// Without the caching allocator; its segment adds kSegmentBytes to both (the temporary one is
// gone before the segment is taken, and before the driver allocation, which is smaller).
inline constexpr size_t kDevice1Outstanding = kDevice1Bytes + kDriverDevice1Bytes;
inline constexpr size_t kDevice1Peak = kDevice1Bytes + kDevice1TempBytes;

// The driver view's totals over both devices, with the caching allocator (its device-1 segment).
inline constexpr int kAllDevicesAllocations = kDeviceAllocations + kDevice1Allocations + 1;
inline constexpr int kAllDevicesFrees = kDeviceFrees + kDevice1Frees;
inline constexpr size_t kAllDevicesOutstanding =
    kDeviceOutstanding + kDevice1Outstanding + kSegmentBytes;

// Pinned host memory: cudaMallocHost(16384) and cudaHostAlloc(8192), freed at the end.
inline constexpr size_t kPinnedBytes = 16384;
inline constexpr size_t kHostAllocBytes = 8192;

// Copies, as kind -> (count, bytes).
inline constexpr int kHtoDPinned = 3;  // cudaMemcpy HtoD of 1000 bytes from the pinned buffer
inline constexpr int kHtoDPageableRuntime = 2;  // cudaMemcpy HtoD, 500 bytes, from malloc memory
inline constexpr int kHtoDPageableDriver = 2;   // cuMemcpyHtoD_v2, 100 bytes, malloc memory
inline constexpr int kDtoHPageable = 4;         // cudaMemcpyAsync DtoH, 256 bytes
inline constexpr int kDtoHPinned = 1;           // cuMemcpyDtoH_v2 300 bytes into pinned memory
inline constexpr int kDtoDRuntime = 1;          // cudaMemcpy DtoD 4096
inline constexpr int kDtoDDriver = 1;           // cuMemcpyDtoD_v2 50
// Runtime copies the fake runtime makes through a driver copy (counted once, as the runtime's).
inline constexpr int kPeer = 1;        // cudaMemcpyPeer 2048 (DtoD, via cuMemcpyPeer)
inline constexpr int kToSymbol = 1;    // cudaMemcpyToSymbol 64 from malloc memory (via HtoD)
inline constexpr int kFromSymbol = 1;  // cudaMemcpyFromSymbol 32 into malloc memory (via DtoH)
inline constexpr int kDefault = 1;     // cudaMemcpy default 77
inline constexpr int kHtoH = 1;        // cudaMemcpy HtoH 10, pageable

// PyTorch's caching allocator (framework view): 6 malloc(1000) of which 4 freed, then
// 2 raw_alloc(3000) of which 1 raw_delete'd.
inline constexpr int kFrameworkAllocations = 8;
inline constexpr int kFrameworkFrees = 5;
inline constexpr size_t kFrameworkOutstanding = 2 * 1000 + 3000;
inline constexpr size_t kFrameworkPeak = 2 * 1000 + 2 * 3000;  // Before the raw_delete.
// Then malloc(device 1, 1000) twice, one freed: the device-1 part of the framework view.
inline constexpr int kFrameworkDevice1Allocations = 2;
inline constexpr int kFrameworkDevice1Frees = 1;
inline constexpr size_t kFrameworkDevice1Outstanding = 1000;
inline constexpr size_t kFrameworkDevice1Peak = 2000;
// Held by the driver but not in use by the framework, per device and in all.
inline constexpr size_t kFrameworkGapDevice0 = kDeviceOutstanding - kFrameworkOutstanding;
inline constexpr size_t kFrameworkGapDevice1 =
    kDevice1Outstanding + kSegmentBytes - kFrameworkDevice1Outstanding;
inline constexpr size_t kFrameworkGap = kFrameworkGapDevice0 + kFrameworkGapDevice1;

}  // namespace vigil::snoop::plan
