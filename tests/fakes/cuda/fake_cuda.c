/* SPDX-License-Identifier: Apache-2.0 */
/* A fake CUDA driver (libcuda.so.1): the real entry points with the prototypes of NVIDIA's
 * CUDA Driver API reference, doing no GPU work. cuModuleGetFunction and cuLibraryGetKernel
 * hand out one distinct handle per kernel name; allocations return distinct fake device
 * addresses and handles; syncs sleep FAKE_CUDA_SYNC_US microseconds. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fake_common.h"

typedef int CUresult; /* enum cudaError_enum: CUDA_SUCCESS = 0 */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_NOT_FOUND = 500
};
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 */
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUfunc_st* CUfunction;
typedef struct CUkern_st* CUkernel;
typedef struct CUmod_st* CUmodule;
typedef struct CUlib_st* CUlibrary;
typedef struct CUstream_st* CUstream;
typedef struct CUctx_st* CUcontext;
typedef int CUdevice; /* CUdevice_v1 */
typedef struct CUevent_st* CUevent;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUlaunchConfig_st CUlaunchConfig;
typedef struct CUmemAllocationProp_st CUmemAllocationProp;
typedef int CUjit_option;
typedef int CUlibraryOption;

static volatile unsigned long fake_calls[64];
static CUdeviceptr next_device = 0x7d0000000000ull;
static unsigned long long next_handle = 0x1000;

/* Kernel handles: slot i of `kernels` is the function named names[i]. */
#define FAKE_MAX_KERNELS 64
static char names[FAKE_MAX_KERNELS][256];
static struct { char unused; } kernels[FAKE_MAX_KERNELS];
static int kernel_count;
static char modules[4];

static void* handle_for(const char* name) {
  for (int i = 0; i < kernel_count; i++) {
    if (strcmp(names[i], name) == 0) return &kernels[i];
  }
  if (kernel_count == FAKE_MAX_KERNELS || strlen(name) >= sizeof(names[0])) return NULL;
  strcpy(names[kernel_count], name);
  return &kernels[kernel_count++];
}

static CUdeviceptr fake_device_alloc(size_t size) {
  return __atomic_fetch_add(&next_device, ((size + 0xfff) & ~(CUdeviceptr)0xfff) + 0x1000,
                            __ATOMIC_RELAXED);
}

FAKE_API CUresult cuInit(unsigned int Flags) {
  FAKE_TOUCH(0);
  return Flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  FAKE_TOUCH(1);
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  *module = (CUmodule)&modules[0];
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  FAKE_TOUCH(2);
  if (!hfunc || !hmod || !name) return CUDA_ERROR_INVALID_VALUE;
  void* h = handle_for(name);
  if (!h) return CUDA_ERROR_NOT_FOUND;
  *hfunc = (CUfunction)h;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                    void** jitOptionsValues, unsigned int numJitOptions,
                                    CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                    unsigned int numLibraryOptions) {
  (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
  (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
  FAKE_TOUCH(3);
  if (!library || !code) return CUDA_ERROR_INVALID_VALUE;
  *library = (CUlibrary)&modules[1];
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  FAKE_TOUCH(4);
  if (!pKernel || !library || !name) return CUDA_ERROR_INVALID_VALUE;
  void* h = handle_for(name);
  if (!h) return CUDA_ERROR_NOT_FOUND;
  *pKernel = (CUkernel)h;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX,
                                 unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, CUstream hStream, void** kernelParams,
                                 void** extra) {
  (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY;
  (void)blockDimZ, (void)sharedMemBytes, (void)hStream, (void)kernelParams, (void)extra;
  FAKE_TOUCH(5);
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                   void** extra) {
  (void)config, (void)kernelParams, (void)extra;
  FAKE_TOUCH(6);
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  (void)hStream;
  FAKE_TOUCH(7);
  return hGraphExec ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuCtxSynchronize(void) {
  FAKE_TOUCH(8);
  fake_sync_sleep();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamSynchronize(CUstream hStream) {
  (void)hStream;
  FAKE_TOUCH(9);
  fake_sync_sleep();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventSynchronize(CUevent hEvent) {
  (void)hEvent;
  FAKE_TOUCH(10);
  fake_sync_sleep();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  FAKE_TOUCH(11);
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  *dptr = fake_device_alloc(bytesize);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr dptr) {
  FAKE_TOUCH(12);
  return dptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                              const CUmemAllocationProp* prop, unsigned long long flags) {
  (void)prop;
  FAKE_TOUCH(13);
  if (!handle || size == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *handle = __atomic_fetch_add(&next_handle, 1, __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  FAKE_TOUCH(14);
  return handle ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                           CUmemGenericAllocationHandle handle, unsigned long long flags) {
  (void)offset;
  FAKE_TOUCH(15);
  return ptr && size && handle && flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  FAKE_TOUCH(16);
  return ptr && size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  (void)ByteCount;
  FAKE_TOUCH(17);
  return dst && src ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                               CUcontext srcContext, size_t ByteCount) {
  (void)dstContext, (void)srcContext, (void)ByteCount;
  FAKE_TOUCH(30);
  return dstDevice && srcDevice ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  (void)ByteCount;
  FAKE_TOUCH(18);
  return dstDevice && srcHost ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  (void)ByteCount;
  FAKE_TOUCH(19);
  return dstHost && srcDevice ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  (void)ByteCount;
  FAKE_TOUCH(20);
  return dstDevice && srcDevice ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Contexts: one primary context per device (cuDevicePrimaryCtxRetain), and created ones
 * (cuCtxCreate) from a small pool; each thread has a current context. */
#define FAKE_DEVICE_COUNT 8
#define FAKE_MAX_CONTEXTS 16
static struct fake_ctx {
  CUdevice device;
} primary_ctx[FAKE_DEVICE_COUNT], created_ctx[FAKE_MAX_CONTEXTS];
static int created_count;
static __thread CUcontext current_ctx;

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  FAKE_TOUCH(21);
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= FAKE_DEVICE_COUNT) return CUDA_ERROR_INVALID_DEVICE;
  primary_ctx[dev].device = dev;
  *pctx = (CUcontext)&primary_ctx[dev];
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  (void)flags;
  FAKE_TOUCH(22);
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= FAKE_DEVICE_COUNT) return CUDA_ERROR_INVALID_DEVICE;
  int i = __atomic_fetch_add(&created_count, 1, __ATOMIC_RELAXED);
  if (i >= FAKE_MAX_CONTEXTS) return CUDA_ERROR_INVALID_VALUE; /* CUDA_ERROR_OUT_OF_MEMORY-ish */
  created_ctx[i].device = dev;
  *pctx = (CUcontext)&created_ctx[i];
  current_ctx = *pctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  FAKE_TOUCH(23);
  current_ctx = ctx;
  return CUDA_SUCCESS;
}
