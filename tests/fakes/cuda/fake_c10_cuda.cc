// SPDX-License-Identifier: Apache-2.0
// A fake libc10_cuda.so exporting PyTorch's caching-allocator entry points under their real
// mangled names: c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**,
// c10::DeviceIndex, size_t, cudaStream_t), free(void*), raw_alloc(size_t) (which calls malloc
// on the current device, as PyTorch's does) and raw_delete(void*) (which calls free). Like the
// real allocator it carves blocks out of 2 MiB segments per device that it gets from cudaMalloc
// with the block's device made current (a CUDAGuard), so the framework's view (blocks) and the
// driver's (segments) differ, per device.
#include <cstddef>
#include <cstdint>

struct CUstream_st;
typedef int cudaError_t;
extern "C" cudaError_t cudaMalloc(void** devPtr, size_t size);
extern "C" cudaError_t cudaSetDevice(int device);
extern "C" cudaError_t cudaGetDevice(int* device);

#define FAKE_API __attribute__((visibility("default"), noinline, noclone, used))

namespace c10 {
using DeviceIndex = int8_t;
namespace cuda::CUDACachingAllocator::Native {

class NativeCachingAllocator {
 public:
  FAKE_API void malloc(void** devPtr, c10::DeviceIndex device, size_t size, CUstream_st* stream);
  FAKE_API void free(void* ptr);
  FAKE_API void* raw_alloc(size_t nbytes);
  FAKE_API void raw_delete(void* ptr);
};

namespace {
constexpr size_t kSegment = 2u << 20;
constexpr int kDevices = 8;
uintptr_t segment_next[kDevices] = {};
uintptr_t segment_end[kDevices] = {};
volatile unsigned long frees = 0;
}  // namespace

void NativeCachingAllocator::malloc(void** devPtr, c10::DeviceIndex device, size_t size,
                                    CUstream_st* stream) {
  (void)stream;
  *devPtr = nullptr;
  if (device < 0 || device >= kDevices) return;
  size_t rounded = (size + 511) & ~size_t{511};  // PyTorch rounds to 512 bytes.
  if (segment_next[device] + rounded > segment_end[device]) {
    int previous = 0;
    if (cudaGetDevice(&previous) != 0 || cudaSetDevice(device) != 0) return;
    void* segment = nullptr;
    size_t bytes = rounded > kSegment ? rounded : kSegment;
    cudaError_t rc = cudaMalloc(&segment, bytes);
    cudaSetDevice(previous);
    if (rc != 0) return;
    segment_next[device] = reinterpret_cast<uintptr_t>(segment);
    segment_end[device] = segment_next[device] + bytes;
  }
  *devPtr = reinterpret_cast<void*>(segment_next[device]);
  segment_next[device] += rounded;
}

void NativeCachingAllocator::free(void* ptr) {
  if (ptr) frees = frees + 1;  // Blocks go back to the cache; segments stay with the driver.
}

void* NativeCachingAllocator::raw_alloc(size_t nbytes) {
  int device = 0;
  if (cudaGetDevice(&device) != 0) return nullptr;
  void* r = nullptr;
  malloc(&r, static_cast<c10::DeviceIndex>(device), nbytes, nullptr);
  return r;
}

void NativeCachingAllocator::raw_delete(void* ptr) { free(ptr); }

}  // namespace cuda::CUDACachingAllocator::Native
}  // namespace c10
