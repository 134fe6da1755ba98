/* SPDX-License-Identifier: Apache-2.0 */
/* A fake CUDA runtime (libcudart.so.12, and libcudart_static.a for static linking): the real
 * entry points with the prototypes of NVIDIA's CUDA Runtime API reference, doing no GPU work.
 * Device allocations return distinct addresses from a fake device range; pinned host
 * allocations return real host memory; syncs sleep FAKE_CUDA_SYNC_US microseconds. Like
 * NVIDIA's runtime, it carries out launches, syncs, device allocations, frees and copies
 * through the driver's entry points when libcuda.so.1 can be loaded (a tracer that probes
 * both libraries then sees the driver calls the runtime makes); without it, it does the work
 * itself. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The driver's entry points the runtime uses (CUDA Driver API prototypes), or all NULL. */
struct fake_driver {
  int (*launch)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shared, void* stream, void** params, void** extra);
  int (*ctx_sync)(void);
  int (*stream_sync)(void* stream);
  int (*mem_alloc)(unsigned long long* dptr, size_t bytes);
  int (*mem_free)(unsigned long long dptr);
  int (*memcpy_unified)(unsigned long long dst, unsigned long long src, size_t bytes);
  int (*memcpy_peer)(unsigned long long dst, void* dst_ctx, unsigned long long src, void* src_ctx,
                     size_t bytes);
  int (*memcpy_htod)(unsigned long long dst, const void* src, size_t bytes);
  int (*memcpy_dtoh)(void* dst, unsigned long long src, size_t bytes);
};

static const struct fake_driver no_driver;
static struct fake_driver the_driver;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static int driver_off = 0; /* fake_cudart_use_driver(0) */

/* Not a CUDA API: lets a benchmark measure the runtime with and without its driver calls. */
FAKE_API void fake_cudart_use_driver(int on) {
  __atomic_store_n(&driver_off, !on, __ATOMIC_RELAXED);
}

/* The fake driver beside this library (never a real one a host may have installed): the
 * directory this code was loaded from, or the executable's when linked in statically. */
static void resolve_driver(void) {
  Dl_info self;
  if (!dladdr((void*)&resolve_driver, &self) || !self.dli_fname) return;
  char path[4096];
  const char* slash = strrchr(self.dli_fname, '/');
  size_t dir = slash ? (size_t)(slash - self.dli_fname) : 0;
  if (dir + sizeof("/libcuda.so.1") > sizeof(path)) return;
  memcpy(path, self.dli_fname, dir);
  memcpy(path + dir, "/libcuda.so.1", sizeof("/libcuda.so.1"));
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD); /* Linked in. */
  if (!lib) return;
  *(void**)&the_driver.launch = dlsym(lib, "cuLaunchKernel");
  *(void**)&the_driver.ctx_sync = dlsym(lib, "cuCtxSynchronize");
  *(void**)&the_driver.stream_sync = dlsym(lib, "cuStreamSynchronize");
  *(void**)&the_driver.mem_alloc = dlsym(lib, "cuMemAlloc_v2");
  *(void**)&the_driver.mem_free = dlsym(lib, "cuMemFree_v2");
  *(void**)&the_driver.memcpy_unified = dlsym(lib, "cuMemcpy");
  *(void**)&the_driver.memcpy_peer = dlsym(lib, "cuMemcpyPeer");
  *(void**)&the_driver.memcpy_htod = dlsym(lib, "cuMemcpyHtoD_v2");
  *(void**)&the_driver.memcpy_dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
}

static const struct fake_driver* driver(void) {
  if (__atomic_load_n(&driver_off, __ATOMIC_RELAXED)) return &no_driver;
  pthread_once(&driver_once, resolve_driver);
  return &the_driver;
}

FAKE_API cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                      size_t sharedMem, cudaStream_t stream) {
  FAKE_TOUCH(0);
  if (!func) return cudaErrorInvalidValue;
  const struct fake_driver* d = driver();
  if (d->launch) {
    d->launch((void*)func, gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y, blockDim.z,
              (unsigned)sharedMem, stream, args, NULL);
  }
  return cudaSuccess;
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
  const struct fake_driver* d = driver();
  if (d->ctx_sync) {
    d->ctx_sync();
  } else {
    fake_sync_sleep();
  }
  return cudaSuccess;
}

FAKE_API cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  FAKE_TOUCH(5);
  const struct fake_driver* d = driver();
  if (d->stream_sync) {
    d->stream_sync(stream);
  } else {
    fake_sync_sleep();
  }
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
  const struct fake_driver* d = driver();
  unsigned long long p = 0;
  if (d->mem_alloc && size > 0) {
    if (d->mem_alloc(&p, size) != 0) return cudaErrorMemoryAllocation;
    *devPtr = (void*)(uintptr_t)p;
  } else {
    *devPtr = fake_device_alloc(size);
  }
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
  FAKE_TOUCH(13);
  const struct fake_driver* d = driver();
  if (d->mem_free && devPtr) d->mem_free((unsigned long long)(uintptr_t)devPtr);
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
  FAKE_TOUCH(16);
  if (kind > cudaMemcpyDefault) return cudaErrorInvalidValue;
  const struct fake_driver* d = driver();
  if (d->memcpy_unified) {
    d->memcpy_unified((unsigned long long)(uintptr_t)dst, (unsigned long long)(uintptr_t)src,
                      count);
  }
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                     enum cudaMemcpyKind kind, cudaStream_t stream) {
  (void)dst, (void)src, (void)count, (void)stream;
  FAKE_TOUCH(17);
  return kind <= cudaMemcpyDefault ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                                    size_t count) {
  (void)dstDevice, (void)srcDevice;
  FAKE_TOUCH(21);
  const struct fake_driver* d = driver();
  if (d->memcpy_peer) {
    d->memcpy_peer((unsigned long long)(uintptr_t)dst, NULL, (unsigned long long)(uintptr_t)src,
                   NULL, count);
  }
  return dst && src ? cudaSuccess : cudaErrorInvalidValue;
}

FAKE_API cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count,
                                        size_t offset, enum cudaMemcpyKind kind) {
  FAKE_TOUCH(22);
  if (!symbol || kind > cudaMemcpyDefault) return cudaErrorInvalidValue;
  const struct fake_driver* d = driver();
  if (d->memcpy_htod) d->memcpy_htod((unsigned long long)(uintptr_t)symbol + offset, src, count);
  return cudaSuccess;
}

FAKE_API cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count,
                                          size_t offset, enum cudaMemcpyKind kind) {
  FAKE_TOUCH(23);
  if (!symbol || kind > cudaMemcpyDefault) return cudaErrorInvalidValue;
  const struct fake_driver* d = driver();
  if (d->memcpy_dtoh) d->memcpy_dtoh(dst, (unsigned long long)(uintptr_t)symbol + offset, count);
  return cudaSuccess;
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
