/* SPDX-License-Identifier: Apache-2.0 */
/* The structs the CUDA probes (cuda_probes.bpf.c) and their user side share: map keys and
 * values, the per-API spec table user space fills before load, and the raw ring-buffer event.
 * Plain C with fixed-width types so both clang -target bpf and g++ read the same layout. */
#ifndef VIGIL_SNOOP_CUDA_PROBES_H_
#define VIGIL_SNOOP_CUDA_PROBES_H_

#ifdef __bpf__
typedef __u8 vs_u8;
typedef __u32 vs_u32;
typedef __u64 vs_u64;
typedef __s64 vs_s64;
#else
#include <stdint.h>
typedef uint8_t vs_u8;
typedef uint32_t vs_u32;
typedef uint64_t vs_u64;
typedef int64_t vs_s64;
#endif

#define VS_MAX_APIS 96
#define VS_NAME_LEN 256
#define VS_HIST_BUCKETS 48
#define VS_MAX_STACK_DEPTH 64
#define VS_MAX_DEVICE 1023   /* Device indices above this are counted as this one. */
#define VS_MAX_PY_DEPTH 32   /* Python frames kept per stack (innermost first). */
#define VS_PY_WINDOW 128     /* Bytes of one Python frame read at once (its fields' span). */
#define VS_PID_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit Linux: no pid reaches it. */
#define VS_PID_WORDS (VS_PID_LIMIT / 64) /* The traced-pid bitmap: one bit per pid. */

/* What a probe does with a call (api_spec.klass). */
enum vs_class {
  VS_CLASS_NONE = 0,
  VS_CLASS_LAUNCH = 1,       /* Count per (pid, api, function pointer in arg_func). */
  VS_CLASS_GRAPH_LAUNCH = 2, /* Count per (pid, api). */
  VS_CLASS_SYNC = 3,         /* Entry to return: count, time, histogram, per stack. */
  VS_CLASS_ALLOC = 4,        /* Return: *arg_out (or the return value) -> outstanding. */
  VS_CLASS_FREE = 5,         /* Entry: arg_addr removed from outstanding. */
  VS_CLASS_COPY = 6,         /* Entry: bytes in arg_size, kind fixed or from arg_kind. */
  VS_CLASS_FUNC_NAME = 7,    /* Return: *arg_out is a handle named by the string arg_name. */
  VS_CLASS_MAP = 8,          /* cuMemMap: arg_size bytes mapped. */
  VS_CLASS_UNMAP = 9,        /* cuMemUnmap: arg_size bytes unmapped. */
  VS_CLASS_SET_DEVICE = 10,  /* cudaSetDevice: on a 0 return, arg_device is the thread's device. */
  VS_CLASS_CTX_NEW = 11,     /* Return: *arg_out is a CUcontext on device arg_device; with
                                make_current, it is now the thread's context. */
  VS_CLASS_CTX_SET = 12,     /* Entry: the context arg_addr becomes the thread's (its device). */
};

/* Memory domains (alloc/free specs; outstanding key). */
enum vs_domain {
  VS_DOMAIN_DEVICE = 0,    /* cudaMalloc*, cuMemAlloc*, cuMemCreate. */
  VS_DOMAIN_HOST = 1,      /* Pinned host memory: cudaMallocHost, cudaHostAlloc. */
  VS_DOMAIN_FRAMEWORK = 2, /* PyTorch's caching allocator. */
  VS_DOMAIN_COUNT = 3,
};

/* Copy directions; 0..4 equal cudaMemcpyKind's values. */
enum vs_copy_kind {
  VS_COPY_HTOH = 0,
  VS_COPY_HTOD = 1,
  VS_COPY_DTOH = 2,
  VS_COPY_DTOD = 3,
  VS_COPY_DEFAULT = 4,
  VS_COPY_FROM_ARG = 255, /* api_spec.copy_kind: read cudaMemcpyKind from arg_kind. */
};

/* Host side of a copy: unknown (no host side), pinned (in a pinned allocation), pageable. */
enum vs_host_mem { VS_HOST_NONE = 0, VS_HOST_PINNED = 1, VS_HOST_PAGEABLE = 2 };

/* Argument positions are 1-based (PT_REGS_PARMn); 0 means "the return value" for arg_out and
 * "none" otherwise. */
struct api_spec {
  vs_u8 klass;
  vs_u8 domain;
  vs_u8 arg_func; /* LAUNCH: the kernel (host stub or CUfunction). */
  vs_u8 arg_out;  /* ALLOC / FUNC_NAME: pointer to the result; 0: the return value is it. */
  vs_u8 arg_size; /* ALLOC, COPY, MAP, UNMAP: bytes. */
  vs_u8 arg_addr; /* FREE: the address or handle freed. */
  vs_u8 arg_kind; /* COPY with copy_kind VS_COPY_FROM_ARG. */
  vs_u8 arg_name; /* FUNC_NAME: const char* name. */
  vs_u8 arg_dst;  /* COPY: destination, source (for the pinned check). */
  vs_u8 arg_src;
  vs_u8 copy_kind;
  vs_u8 check_rc;     /* ALLOC / FUNC_NAME / SET_DEVICE: only a 0 return value counts. */
  vs_u8 arg_device;   /* ALLOC: the device index (0: the thread's current device); SET_DEVICE. */
  vs_u8 device_bytes; /* arg_device's width: 1 (c10::DeviceIndex, int8_t) or 4 (int). */
  vs_u8 make_current; /* CTX_NEW: the call makes the new context current (cuCtxCreate). */
  vs_u8 skip_under_runtime; /* A driver call made from the runtime's code records nothing. */
};

/* Where a process's CUDA runtime code is (runtime_code, per pid): the executable mappings of a
 * shared libcudart, or the span of a runtime linked into the executable. A driver call whose
 * return address is in one is the runtime carrying out its own call. */
#define VS_MAX_CODE_RANGES 4
struct code_ranges {
  vs_u64 start[VS_MAX_CODE_RANGES];
  vs_u64 end[VS_MAX_CODE_RANGES]; /* One past the last byte; 0 0: unused. */
};

/* How a CPython process keeps its frames (py_procs, per pid), from profile/python_offsets:
 * byte offsets into the thread state, _PyCFrame and each frame. */
enum vs_py_model {
  VS_PY_INTERP_FRAME = 0, /* _PyInterpreterFrame chains (3.11+). */
  VS_PY_FRAME_OBJECT = 1, /* PyFrameObject f_back chains from PyThreadState.frame (3.9, 3.10). */
};
enum vs_py_entry_mark {
  VS_PY_ENTRY_FLAG = 0, /* frame_is_entry byte (3.11). */
  VS_PY_ENTRY_SHIM = 1, /* A frame with owner FRAME_OWNED_BY_CSTACK below the entry (3.12+). */
};

struct py_layout {
  vs_u32 model;
  vs_u32 entry_mark;
  vs_u32 tstate_cframe; /* 0: the frame hangs off the thread state (tstate_current_frame). */
  vs_u32 cframe_current_frame;
  vs_u32 tstate_current_frame;
  vs_u32 tstate_frame;            /* VS_PY_FRAME_OBJECT. */
  vs_u32 tstate_native_thread_id; /* 0: not checked (before 3.11). */
  vs_u32 frame_code;
  vs_u32 frame_previous;
  vs_u32 frame_position; /* prev_instr / instr_ptr (a pointer), or int f_lasti (frame objects). */
  vs_u32 frame_is_entry;
  vs_u32 frame_owner;
  vs_u32 frame_read_size; /* Bytes read per frame, covering every field above; <= VS_PY_WINDOW. */
};

/* One Python frame as captured: resolved to name, file and line in user space. */
struct py_frame {
  vs_u64 code;     /* PyCodeObject* (3.13: f_executable). */
  vs_u64 position; /* The instruction pointer (interpreter frames) or f_lasti (frame objects). */
};

struct stack_frames {
  vs_u64 ips[VS_MAX_STACK_DEPTH]; /* Innermost first; zeros after the last frame. */
  vs_u32 py_depth;                /* Python frames in py[], innermost first; 0 for none. */
  vs_u32 py_entry;                /* Bit i: py[i] is the first frame of its eval-loop call. */
  vs_u32 py_truncated;            /* The chain went on past VS_MAX_PY_DEPTH frames. */
  vs_u32 pad;
  struct py_frame py[VS_MAX_PY_DEPTH];
};

struct launch_key {
  vs_u32 pid;
  vs_u32 api;
  vs_u64 func;
};

struct sync_key {
  vs_u32 pid;
  vs_u32 api;
};

struct sync_stats {
  vs_u64 count;
  vs_u64 ns;
  vs_u64 hist[VS_HIST_BUCKETS]; /* Bucket b: durations < 2^b ns. */
};

struct sync_stack_key {
  vs_u32 pid;
  vs_u32 api;
  vs_s64 stack_id;
};

struct count_ns {
  vs_u64 count;
  vs_u64 ns;
};

/* An in-flight call, entry to return, per (pid, tid, api); the pid lets user space drop a
 * process's leftovers (a thread that died inside a call) when it exits. */
struct inflight_key {
  vs_u32 pid;
  vs_u32 tid;
  vs_u32 api;
};

struct inflight {
  vs_u64 start_ns;
  vs_u64 out;    /* ALLOC / FUNC_NAME: the out-pointer. */
  vs_u64 size;   /* ALLOC: the size asked for. */
  vs_u64 name;   /* FUNC_NAME: the name pointer. */
  vs_u32 device; /* ALLOC: the device allocated on; SET_DEVICE: the device asked for. */
  vs_u32 weight; /* SYNC: the calls this one stands for (1, or N when 1 in N is recorded). */
};

/* The CUDA device a thread made current (cudaSetDevice); a thread not in the map is on 0. */
struct thread_key {
  vs_u32 pid;
  vs_u32 tid;
};

struct alloc_key {
  vs_u32 pid;
  vs_u32 domain;
  vs_u64 addr;
};

struct alloc_info {
  vs_u64 size;
  vs_u64 start_ns;
  vs_s64 stack_id;
  vs_u32 api;
  vs_u32 device; /* So a free is taken off the device it was allocated on. */
};

/* A driver context's device, from the call that created or retained it. */
struct ctx_key {
  vs_u32 pid;
  vs_u32 pad;
  vs_u64 ctx;
};

/* Pinned host memory (VS_DOMAIN_HOST) is always device 0. */
struct mem_key {
  vs_u32 pid;
  vs_u32 domain;
  vs_u32 device;
};

struct mem_stats {
  vs_u64 allocations;
  vs_u64 frees;
  vs_s64 current;
  vs_s64 peak;
  vs_s64 mapped;
  vs_u64 hist[VS_HIST_BUCKETS]; /* Bucket b: sizes <= 2^b bytes. */
};

struct copy_key {
  vs_u32 pid;
  vs_u8 kind;
  vs_u8 host_mem;
  vs_u8 pad[2];
};

struct copy_stats {
  vs_u64 count;
  vs_u64 bytes;
};

struct func_name_key {
  vs_u32 pid;
  vs_u32 pad;
  vs_u64 handle;
};

struct func_name {
  char name[VS_NAME_LEN];
};

/* Per-CPU counters (counters map index). */
enum vs_counter {
  VS_CTR_SEEN = 0,     /* Calls that passed the pid filter. */
  VS_CTR_RECORDED = 1, /* Calls recorded (after sampling). */
  VS_CTR_RB_DROPPED = 2,
  VS_CTR_MAP_FULL = 3,     /* Updates refused because a map was full. */
  VS_CTR_PY_NO_THREAD = 4, /* Stacks in CPython processes taken without Python frames: the
                              thread's state was not known yet (user space is told). */
  VS_CTR_COUNT = 5,
};

struct raw_event {
  vs_u64 start_ns; /* bpf_ktime_get_ns (CLOCK_MONOTONIC). */
  vs_u64 duration_ns;
  vs_u32 pid;
  vs_u32 tid;
  vs_u32 api;
  vs_u8 klass;
  vs_u8 copy_kind;
  vs_u8 host_mem;
  vs_u8 pad;
  vs_u64 func; /* LAUNCH: the kernel key. */
  vs_u64 bytes;
  vs_u64 addr;
};

#endif /* VIGIL_SNOOP_CUDA_PROBES_H_ */
