/* SPDX-License-Identifier: Apache-2.0 */
/* A fake CUDA runtime (libcudart.so.12, and libcudart_static.a for static linking): the real
 * entry points with the prototypes of NVIDIA's CUDA Runtime API reference, doing no GPU work.
 * Device allocations return distinct addresses from a fake device range; pinned host
 * allocations return real host memory; syncs sleep FAKE_CUDA_SYNC_US microseconds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fake_common.h"

typedef int cudaError_t; /* enum cudaError: cudaSuccess = 0 */
enum {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101
};
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
typedef struct cudaLaunchConfig_st cudaLaunchConfig_t; /* Only passed by pointer here. */
typedef struct dim3 {
  unsigned int x, y, z;
} dim3;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

static volatile unsigned long fake_calls[64];
static uintptr_t next_device = 0x7e0000000000ull; /* Fake device address space. */

static void* fake_device_alloc(size_t size) {
  uintptr_t p = __atomic_fetch_add(&next_device, ((size + 0xfff) & ~(uintptr_t)0xfff) + 0x1000,
                                   __ATOMIC_RELAXED);
  return (void*)p;
}

FAKE_API cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                      size_t sharedMem, cudaStream_t stream) {
  (void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
  FAKE_TOUCH(0);
  return func ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                         void** args) {
  (void)config, (void)args;
  FAKE_TOUCH(1);
  return func ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                                 void** args, size_t sharedMem,
                                                 cudaStream_t stream) {
  (void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
  FAKE_TOUCH(2);
  return func ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  (void)stream;
  FAKE_TOUCH(3);
  return graphExec ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaDeviceSynchronize(void) {
  FAKE_TOUCH(4);
  fake_sync_sleep();
  return cudaSuccess;
}

FAKE_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  (void)stream;
  FAKE_TOUCH(5);
  fake_sync_sleep();
  return cudaSuccess;
}

FAKE_API cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  (void)event;
  FAKE_TOUCH(6);
  fake_sync_sleep();
  return cudaSuccess;
}

FAKE_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                         unsigned int flags) {
  (void)stream, (void)event, (void)flags;
  FAKE_TOUCH(7);
  fake_sync_sleep();
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMalloc(void** devPtr, size_t size) {
  FAKE_TOUCH(8);
  if (!devPtr) return cudaErrorInvalidValue;
  *devPtr = fake_device_alloc(size);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  (void)hStream;
  FAKE_TOUCH(9);
  if (!devPtr) return cudaErrorInvalidValue;
  *devPtr = fake_device_alloc(size);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  (void)flags;
  FAKE_TOUCH(10);
  if (!devPtr) return cudaErrorInvalidValue;
  *devPtr = fake_device_alloc(size);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMallocHost(void** ptr, size_t size) {
  FAKE_TOUCH(11);
  if (!ptr) return cudaErrorInvalidValue;
  *ptr = malloc(size);
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

FAKE_API cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  (void)flags;
  FAKE_TOUCH(12);
  if (!pHost) return cudaErrorInvalidValue;
  *pHost = malloc(size);
  return *pHost ? cudaSuccess : cudaErrorMemoryAllocation;
}

FAKE_API cudaError_t cudaFree(void* devPtr) {
  (void)devPtr;
  FAKE_TOUCH(13);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  (void)devPtr, (void)hStream;
  FAKE_TOUCH(14);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaFreeHost(void* ptr) {
  FAKE_TOUCH(15);
  free(ptr);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                enum cudaMemcpyKind kind) {
  (void)dst, (void)src, (void)count;
  FAKE_TOUCH(16);
  return kind <= cudaMemcpyDefault ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                     enum cudaMemcpyKind kind, cudaStream_t stream) {
  (void)dst, (void)src, (void)count, (void)stream;
  FAKE_TOUCH(17);
  return kind <= cudaMemcpyDefault ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaGetLastError(void) {
  FAKE_TOUCH(18);
  return cudaSuccess;
}

/* Devices 0..FAKE_DEVICE_COUNT-1; each thread starts on device 0, as with the real runtime. */
#define FAKE_DEVICE_COUNT 8
static __thread int fake_current_device = 0;

FAKE_API cudaError_t cudaSetDevice(int device) {
  FAKE_TOUCH(19);
  if (device < 0 || device >= FAKE_DEVICE_COUNT) return cudaErrorInvalidDevice;
  fake_current_device = device;
  return cudaSuccess;
}

FAKE_API cudaError_t cudaGetDevice(int* device) {
  FAKE_TOUCH(20);
  if (!device) return cudaErrorInvalidValue;
  *device = fake_current_device;
  return cudaSuccess;
}
