// SPDX-License-Identifier: GPL-2.0
// Uprobes on the CUDA runtime, the driver and PyTorch's caching allocator, aggregated in maps:
// launches per (pid, api, kernel), sync time per api and per stack, outstanding allocations,
// copy bytes per direction, kernel names from cuModuleGetFunction. One entry and one return
// program serve every API; the attach cookie is the API's index in `specs`, which user space
// fills before load. Calls from pids not set in `traced` are ignored; raw events go to the ring
// buffer only when `raw_enabled` is set. In CPython processes (a layout in `py_procs`) a stack
// also carries the calling thread's Python frames, read from its thread state at the call.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cuda_probes.h"

char LICENSE[] SEC("license") = "GPL";

const volatile struct api_spec specs[VS_MAX_APIS] = {};

// Written by user space while running (mmapped .bss).
__u32 sample_every = 1;  // Record 1 call in sample_every (frees are never sampled).
__u32 raw_enabled = 0;
__u32 follow_all = 0;  // Note untraced pids that call into a probed file (new_pids).

// Traced pids, one bit each (bit pid % 64 of word pid / 64). An array lookup is inlined by the
// JIT where a hash lookup is a call, and every probed call asks this first.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, VS_PID_WORDS);
  __type(key, __u32);
  __type(value, __u64);
} traced SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);
  __type(value, struct code_ranges);
} runtime_code SEC(".maps");

// Untraced processes seen calling into a probed file while following: user space adds them.
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, __u8);
} new_pids SEC(".maps");

// Pids to stop (SIGSTOP) when they reach their executable's entry point.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, __u8);
} stop_at_entry SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct launch_key);
  __type(value, __u64);
} launches SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct sync_key);
  __type(value, struct sync_stats);
} syncs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct sync_stack_key);
  __type(value, struct count_ns);
} sync_stacks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct inflight_key);
  __type(value, struct inflight);
} inflights SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 262144);
  __type(key, struct alloc_key);
  __type(value, struct alloc_info);
} outstanding SEC(".maps");

// The device each thread made current with cudaSetDevice (absent: device 0).
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct thread_key);
  __type(value, __u32);
} thread_devices SEC(".maps");

// The device of each CUcontext a traced process created or retained.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct ctx_key);
  __type(value, __u32);
} ctx_devices SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct mem_key);
  __type(value, struct mem_stats);
} memory SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct copy_key);
  __type(value, struct copy_stats);
} copies SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct func_name_key);
  __type(value, struct func_name);
} func_names SEC(".maps");

// User stacks by a 64-bit hash of their frames. (A STACK_TRACE map hashes into buckets and
// refuses a second stack that lands in a taken bucket, which loses stacks a few percent of the
// time with only dozens of them.)
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u64);
  __type(value, struct stack_frames);
} stacks SEC(".maps");

// A stack being taken, and the bytes of the Python frame being read (+8: a field read at the
// window's last offset stays inside the value).
struct stack_scratch_value {
  struct stack_frames s;
  __u8 window[VS_PY_WINDOW + 8];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct stack_scratch_value);
} stack_scratch SEC(".maps");

// CPython processes: where their frames are (user space writes it at attach).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);
  __type(value, struct py_layout);
} py_procs SEC(".maps");

// Each Python thread's PyThreadState*, by (pid, native tid), from user space's walk of the
// interpreter's thread list; checked against the state's native_thread_id before use.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct thread_key);
  __type(value, __u64);
} py_threads SEC(".maps");

// Threads of CPython processes that called without a known thread state: user space re-walks
// that process's thread list on its next Poll.
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 1024);
  __type(key, struct thread_key);
  __type(value, __u8);
} py_new_threads SEC(".maps");

// One per-CPU slot holding every counter (vs_counter index), so a call does one lookup.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64[VS_CTR_COUNT]);
} counters SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 16 * 1024 * 1024);
} events SEC(".maps");

// Zeroed values to create map entries from (too big for the 512-byte BPF stack).
static const struct sync_stats zero_sync;
static const struct mem_stats zero_mem;
static const struct func_name zero_name;

static __always_inline void bump(__u32 which) {
  __u32 zero = 0;
  __u64* v = bpf_map_lookup_elem(&counters, &zero);
  if (v && which < VS_CTR_COUNT) v[which] += 1;
}

static __always_inline bool is_traced(__u32 pid) {
  __u32 word = pid / 64;
  __u64* bits = bpf_map_lookup_elem(&traced, &word);
  return bits && ((*bits >> (pid % 64)) & 1);
}

// Argument i (1-based; 0 or out of range: 0). The registers are read at fixed offsets first:
// the verifier refuses a context read at a computed offset, which a switch compiles into.
static __always_inline __u64 arg(struct pt_regs* ctx, __u8 i) {
  __u64 p1 = PT_REGS_PARM1(ctx), p2 = PT_REGS_PARM2(ctx), p3 = PT_REGS_PARM3(ctx);
  __u64 p4 = PT_REGS_PARM4(ctx), p5 = PT_REGS_PARM5(ctx);
  asm volatile("" : "+r"(p1), "+r"(p2), "+r"(p3), "+r"(p4), "+r"(p5));  // Loads happen here.
  if (i == 1) return p1;
  if (i == 2) return p2;
  if (i == 3) return p3;
  if (i == 4) return p4;
  if (i == 5) return p5;
  return 0;
}

static __always_inline __u64 read_ptr(__u64 address) {
  __u64 v = 0;
  if (bpf_probe_read_user(&v, sizeof(v), (const void*)address) != 0) return 0;
  return v;
}

static __always_inline __u64 window_u64(const __u8* w, __u32 offset) {
  return *(const __u64*)(w + (offset & (VS_PY_WINDOW - 1)));
}

// The calling thread's PyThreadState*, or 0 (not a Python thread, or not known yet: noted).
static __always_inline __u64 python_thread_state(const struct py_layout* l, __u64 pid_tgid) {
  struct thread_key k = {.pid = pid_tgid >> 32, .tid = (__u32)pid_tgid};
  __u64* known = bpf_map_lookup_elem(&py_threads, &k);
  __u64 tstate = known ? *known : 0;
  // A thread state freed and its tid reused by a thread without one reads as unknown.
  if (tstate && l->tstate_native_thread_id &&
      (__u32)read_ptr(tstate + l->tstate_native_thread_id) != k.tid) {
    tstate = 0;
  }
  if (!tstate) {
    __u8 one = 1;
    bpf_map_update_elem(&py_new_threads, &k, &one, BPF_ANY);
    bump(VS_CTR_PY_NO_THREAD);
  }
  return tstate;
}

struct py_walk {
  struct stack_scratch_value* b;
  const struct py_layout* l;
  __u64 frame;
  __u32 n;
  __u32 size;
};

// One frame of the chain (a bpf_loop callback, so the verifier checks one turn, not every
// unrolled one): 0 to go on, 1 to stop.
static long python_frame(__u64 turn, void* arg) {
  struct py_walk* w = arg;
  struct stack_scratch_value* b = w->b;
  const struct py_layout* l = w->l;
  if (!w->frame || w->n >= VS_MAX_PY_DEPTH) return 1;
  __u32 size = w->size;
  if (size > VS_PY_WINDOW) return 1;
  if (bpf_probe_read_user(b->window, size, (const void*)w->frame) != 0) {
    w->frame = 0;  // An unreadable frame ends the chain; what was read is kept.
    return 1;
  }
  __u64 code = window_u64(b->window, l->frame_code);
  __u64 previous = window_u64(b->window, l->frame_previous);
  __u64 position = window_u64(b->window, l->frame_position);
  bool entry = true;
  __u32 n = w->n;
  if (l->model == VS_PY_INTERP_FRAME) {
    if (l->entry_mark == VS_PY_ENTRY_SHIM) {
      if (b->window[l->frame_owner & (VS_PY_WINDOW - 1)] == 3 /* FRAME_OWNED_BY_CSTACK */) {
        if (n > 0) b->s.py_entry |= 1u << ((n - 1) & 31);
        w->frame = previous;
        return 0;
      }
      entry = false;
    } else {
      entry = b->window[l->frame_is_entry & (VS_PY_WINDOW - 1)] != 0;
    }
  } else {
    position = (__u64)(__s64)(__s32)position;  // int f_lasti.
  }
  b->s.py[n & (VS_MAX_PY_DEPTH - 1)].code = code;
  b->s.py[n & (VS_MAX_PY_DEPTH - 1)].position = position;
  if (entry) b->s.py_entry |= 1u << (n & 31);
  w->n = n + 1;
  w->frame = previous;
  return 0;
}

// The calling thread's Python frames into s->py (what profile/python_frames reads from outside,
// at the moment of the call): innermost first, shim frames skipped (their caller marked as a
// run's entry). A frame that cannot be read ends the chain there.
static __always_inline void python_frames(struct stack_scratch_value* b, __u64 pid_tgid) {
  struct stack_frames* s = &b->s;
  s->py_depth = 0;
  s->py_entry = 0;
  s->py_truncated = 0;
  __u32 pid = pid_tgid >> 32;
  const struct py_layout* l = bpf_map_lookup_elem(&py_procs, &pid);
  if (!l) return;  // Not CPython: nothing more per call than this lookup.
  __u64 tstate = python_thread_state(l, pid_tgid);
  if (!tstate) return;
  struct py_walk w = {.b = b, .l = l, .frame = 0, .n = 0, .size = l->frame_read_size};
  if (w.size == 0 || w.size > VS_PY_WINDOW) return;
  if (l->model == VS_PY_FRAME_OBJECT) {
    w.frame = read_ptr(tstate + l->tstate_frame);
  } else if (l->tstate_cframe) {
    __u64 cframe = read_ptr(tstate + l->tstate_cframe);
    if (cframe) w.frame = read_ptr(cframe + l->cframe_current_frame);
  } else {
    w.frame = read_ptr(tstate + l->tstate_current_frame);
  }
  // Shim frames take a turn without a slot: a few turns more than slots.
  bpf_loop(VS_MAX_PY_DEPTH + 8, python_frame, &w, 0);
  s->py_depth = w.n;
  s->py_truncated = w.frame != 0;
}

// The calling user stack (frame pointers, and Python frames in CPython processes) stored in
// `stacks`; its id (>= 0), or -1.
static __always_inline __s64 user_stack_id(struct pt_regs* ctx) {
  __u32 zero = 0;
  struct stack_scratch_value* sv = bpf_map_lookup_elem(&stack_scratch, &zero);
  if (!sv) return -1;
  struct stack_frames* b = &sv->s;
  long n = bpf_get_stack(ctx, b->ips, sizeof(b->ips), BPF_F_USER_STACK);
  if (n <= 0) return -1;
  __u64 h = 14695981039346656037ull;  // FNV-1a over the frames.
  for (int i = 0; i < VS_MAX_STACK_DEPTH; i++) {
    if (i * 8 >= n) break;
    h ^= b->ips[i];
    h *= 1099511628211ull;
  }
  for (int i = 0; i < VS_MAX_STACK_DEPTH; i++) {  // bpf_get_stack leaves the rest as it was.
    if (i * 8 >= n) b->ips[i] = 0;
  }
  python_frames(sv, bpf_get_current_pid_tgid());
  for (int i = 0; i < VS_MAX_PY_DEPTH; i++) {  // Slots past py_depth are left as they were.
    if (i >= b->py_depth) break;
    h ^= b->py[i].code;
    h *= 1099511628211ull;
    h ^= b->py[i].position;
    h *= 1099511628211ull;
  }
  h ^= b->py_entry;
  h *= 1099511628211ull;
  h &= 0x7fffffffffffffffull;
  if (bpf_map_update_elem(&stacks, &h, b, BPF_NOEXIST) != 0 && !bpf_map_lookup_elem(&stacks, &h)) {
    bump(VS_CTR_MAP_FULL);
    return -1;
  }
  return (__s64)h;
}

static __always_inline __u32 log2_bucket(__u64 v) {
  // Smallest b with v <= 2^b, capped at the last bucket.
  __u32 b = 0;
  for (int i = 0; i < VS_HIST_BUCKETS - 1; i++) {
    if (((__u64)1 << b) >= v) break;
    b++;
  }
  return b;
}

// Whether the probed function was called from the process's runtime code: at its first
// instruction (or the push after endbr64) the return address is on top of the stack.
static __always_inline bool called_by_runtime(struct pt_regs* ctx, __u32 pid) {
  const struct code_ranges* r = bpf_map_lookup_elem(&runtime_code, &pid);
  if (!r) return false;
  __u64 ret = read_ptr(PT_REGS_SP(ctx));
  for (int i = 0; i < VS_MAX_CODE_RANGES; i++) {
    if (ret >= r->start[i] && ret < r->end[i]) return true;
  }
  return false;
}

// The spec for API `cookie`, or NULL when the caller (`pid_tgid`) is not traced, the call is a
// driver call the runtime makes for its own (counted there), or the call is sampled out. The
// caller reads the pid and the cookie once: each helper call is a call and a return in the
// kernel, a measurable part of a probe's cost.
// *weight_out: how many calls this recorded one stands for (1, or N while 1 in N is recorded),
// so that counts stay estimates of every call, not of the recorded ones only.
static __always_inline const volatile struct api_spec* begin(struct pt_regs* ctx,
                                                             __u64 pid_tgid, __u64 cookie,
                                                             bool never_sample,
                                                             __u32* weight_out) {
  __u32 pid = pid_tgid >> 32;
  if (!is_traced(pid)) {
    if (follow_all) {
      __u8 one = 1;
      bpf_map_update_elem(&new_pids, &pid, &one, BPF_NOEXIST);
    }
    return NULL;
  }
  if (cookie >= VS_MAX_APIS) return NULL;
  // Before the counters: a nested call must not take a caller's turn in the sampling.
  if (specs[cookie].skip_under_runtime && called_by_runtime(ctx, pid)) return NULL;
  __u32 zero = 0;
  __u64* ctr = bpf_map_lookup_elem(&counters, &zero);
  if (!ctr) return NULL;
  ctr[VS_CTR_SEEN] += 1;
  __u32 every = sample_every;
  if (!never_sample && every > 1 && (ctr[VS_CTR_SEEN] % every) != 0) return NULL;
  ctr[VS_CTR_RECORDED] += 1;
  *weight_out = (!never_sample && every > 1) ? every : 1;
  return &specs[cookie];
}

// A raw event, when a raw trace is asked for. `start` 0: the call is now; the clock is read
// here, after the check, because a helper passed as an argument runs on every call.
static __always_inline void emit(__u32 api, __u8 klass, __u64 start, __u64 dur, __u64 func,
                                 __u64 bytes, __u64 addr, __u8 kind, __u8 host_mem) {
  if (!raw_enabled) return;
  if (start == 0) start = bpf_ktime_get_ns();
  struct raw_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    bump(VS_CTR_RB_DROPPED);
    return;
  }
  __u64 id = bpf_get_current_pid_tgid();
  e->start_ns = start;
  e->duration_ns = dur;
  e->pid = id >> 32;
  e->tid = (__u32)id;
  e->api = api;
  e->klass = klass;
  e->copy_kind = kind;
  e->host_mem = host_mem;
  e->pad = 0;
  e->func = func;
  e->bytes = bytes;
  e->addr = addr;
  bpf_ringbuf_submit(e, 0);
}

static __always_inline void add_u64(void* map, void* key, __u64 delta) {
  __u64* v = bpf_map_lookup_elem(map, key);
  if (v) {
    __sync_fetch_and_add(v, delta);
    return;
  }
  __u64 init = delta;
  if (bpf_map_update_elem(map, key, &init, BPF_NOEXIST) != 0) {
    v = bpf_map_lookup_elem(map, key);
    if (v)
      __sync_fetch_and_add(v, delta);
    else
      bump(VS_CTR_MAP_FULL);
  }
}

// The calling thread's current device: the last cudaSetDevice that succeeded, else 0.
static __always_inline __u32 thread_device(__u64 pid_tgid) {
  struct thread_key k = {.pid = pid_tgid >> 32, .tid = (__u32)pid_tgid};
  __u32* d = bpf_map_lookup_elem(&thread_devices, &k);
  return d ? *d : 0;
}

// The device an allocation lands on: its device argument when the API has one (a negative
// index, or none, means the thread's current device); pinned host memory is device 0.
static __always_inline __u32 alloc_device(struct pt_regs* ctx, const volatile struct api_spec* s,
                                          __u64 pid_tgid) {
  if (s->domain == VS_DOMAIN_HOST) return 0;
  if (!s->arg_device) return thread_device(pid_tgid);
  __u64 raw = arg(ctx, s->arg_device);
  __s64 d = s->device_bytes == 1 ? (__s64)(__s8)raw : (__s64)(__s32)raw;
  if (d < 0) return thread_device(pid_tgid);
  return d > VS_MAX_DEVICE ? VS_MAX_DEVICE : (__u32)d;
}

static __always_inline void set_thread_device(__u64 pid_tgid, __u32 device) {
  struct thread_key k = {.pid = pid_tgid >> 32, .tid = (__u32)pid_tgid};
  if (bpf_map_update_elem(&thread_devices, &k, &device, BPF_ANY) != 0) bump(VS_CTR_MAP_FULL);
}

static __always_inline __u32 clamp_device(__s32 d) {
  return d < 0 ? 0 : (d > VS_MAX_DEVICE ? VS_MAX_DEVICE : (__u32)d);
}

static __always_inline struct mem_stats* mem_of(__u32 pid, __u32 domain, __u32 device) {
  struct mem_key k = {.pid = pid, .domain = domain, .device = device};
  struct mem_stats* m = bpf_map_lookup_elem(&memory, &k);
  if (m) return m;
  bpf_map_update_elem(&memory, &k, &zero_mem, BPF_NOEXIST);
  m = bpf_map_lookup_elem(&memory, &k);
  if (!m) bump(VS_CTR_MAP_FULL);
  return m;
}

static __always_inline void do_free(__u32 api, __u32 pid, __u32 domain, __u64 addr) {
  struct alloc_key k = {.pid = pid, .domain = domain, .addr = addr};
  struct alloc_info* a = bpf_map_lookup_elem(&outstanding, &k);
  if (!a) return;  // Not allocated while traced (or NULL): nothing to account.
  __u64 size = a->size;
  __u32 device = a->device;
  if (bpf_map_delete_elem(&outstanding, &k) != 0) return;  // Another thread freed it first.
  struct mem_stats* m = mem_of(pid, domain, device);
  if (m) {
    __sync_fetch_and_add(&m->frees, 1);
    __sync_fetch_and_sub(&m->current, (__s64)size);
  }
  emit(api, VS_CLASS_FREE, 0, 0, 0, size, addr, 0, 0);
}

static __always_inline __u8 host_mem_of(__u32 pid, __u64 addr) {
  struct alloc_key k = {.pid = pid, .domain = VS_DOMAIN_HOST, .addr = addr};
  return bpf_map_lookup_elem(&outstanding, &k) ? VS_HOST_PINNED : VS_HOST_PAGEABLE;
}

SEC("uprobe")
int vs_entry(struct pt_regs* ctx) {
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u64 id = bpf_get_current_pid_tgid();
  // Frees and device switches are never sampled out: each one moves later figures.
  bool keep = cookie < VS_MAX_APIS && (specs[cookie].klass == VS_CLASS_FREE ||
                                       specs[cookie].klass >= VS_CLASS_SET_DEVICE);
  __u32 weight = 1;
  const volatile struct api_spec* s = begin(ctx, id, cookie, keep, &weight);
  if (!s) return 0;
  __u32 api = (__u32)cookie;
  __u32 pid = id >> 32;
  __u8 klass = s->klass;
  if (klass == VS_CLASS_LAUNCH || klass == VS_CLASS_GRAPH_LAUNCH) {
    struct launch_key k = {.pid = pid, .api = api, .func = 0};
    if (klass == VS_CLASS_LAUNCH) k.func = arg(ctx, s->arg_func);
    add_u64(&launches, &k, weight);
    emit(api, klass, 0, 0, k.func, 0, 0, 0, 0);
    return 0;
  }
  if (klass == VS_CLASS_FREE) {
    do_free(api, pid, s->domain, arg(ctx, s->arg_addr));
    return 0;
  }
  if (klass == VS_CLASS_COPY) {
    __u8 kind = s->copy_kind;
    if (kind == VS_COPY_FROM_ARG) kind = (__u8)arg(ctx, s->arg_kind);
    if (kind > VS_COPY_DEFAULT) kind = VS_COPY_DEFAULT;
    __u8 host = VS_HOST_NONE;
    if (kind == VS_COPY_HTOD || kind == VS_COPY_HTOH) host = host_mem_of(pid, arg(ctx, s->arg_src));
    if (kind == VS_COPY_DTOH) host = host_mem_of(pid, arg(ctx, s->arg_dst));
    __u64 bytes = arg(ctx, s->arg_size);
    struct copy_key k = {.pid = pid, .kind = kind, .host_mem = host};
    struct copy_stats* c = bpf_map_lookup_elem(&copies, &k);
    if (!c) {
      struct copy_stats zero = {};
      bpf_map_update_elem(&copies, &k, &zero, BPF_NOEXIST);
      c = bpf_map_lookup_elem(&copies, &k);
    }
    if (c) {
      __sync_fetch_and_add(&c->count, weight);
      __sync_fetch_and_add(&c->bytes, bytes * weight);
    } else {
      bump(VS_CTR_MAP_FULL);
    }
    emit(api, klass, 0, 0, 0, bytes, 0, kind, host);
    return 0;
  }
  if (klass == VS_CLASS_CTX_SET) {
    struct ctx_key ck = {.pid = pid, .ctx = arg(ctx, s->arg_addr)};
    __u32* d = bpf_map_lookup_elem(&ctx_devices, &ck);
    if (d) set_thread_device(id, *d);  // A context created before tracing: unknown, kept.
    return 0;
  }
  if (klass == VS_CLASS_MAP || klass == VS_CLASS_UNMAP) {
    struct mem_stats* m = mem_of(pid, VS_DOMAIN_DEVICE, thread_device(id));
    __s64 bytes = (__s64)arg(ctx, s->arg_size);
    if (m) __sync_fetch_and_add(&m->mapped, klass == VS_CLASS_MAP ? bytes : -bytes);
    emit(api, klass, 0, 0, 0, (__u64)bytes, arg(ctx, 1), 0, 0);
    return 0;
  }
  // SYNC, ALLOC, FUNC_NAME, SET_DEVICE: finished in vs_return.
  struct inflight_key k = {.pid = pid, .tid = (__u32)id, .api = api};
  struct inflight f = {.start_ns = bpf_ktime_get_ns(), .weight = weight};
  if (klass == VS_CLASS_ALLOC || klass == VS_CLASS_FUNC_NAME) {
    f.out = s->arg_out ? arg(ctx, s->arg_out) : 0;
    f.size = arg(ctx, s->arg_size);
    f.name = arg(ctx, s->arg_name);
    if (klass == VS_CLASS_ALLOC) f.device = alloc_device(ctx, s, id);
  } else if (klass == VS_CLASS_SET_DEVICE) {
    f.device = clamp_device((__s32)arg(ctx, s->arg_device));
  } else if (klass == VS_CLASS_CTX_NEW) {
    f.out = arg(ctx, s->arg_out);
    f.device = clamp_device((__s32)arg(ctx, s->arg_device));
  }
  if (bpf_map_update_elem(&inflights, &k, &f, BPF_ANY) != 0) bump(VS_CTR_MAP_FULL);
  return 0;
}

static __always_inline void finish_sync(struct pt_regs* ctx, __u32 api, __u32 pid,
                                        struct inflight* f) {
  __u64 now = bpf_ktime_get_ns();
  __u64 dur = now - f->start_ns;
  struct sync_key k = {.pid = pid, .api = api};
  struct sync_stats* st = bpf_map_lookup_elem(&syncs, &k);
  if (!st) {
    bpf_map_update_elem(&syncs, &k, &zero_sync, BPF_NOEXIST);
    st = bpf_map_lookup_elem(&syncs, &k);
  }
  const __u64 w = f->weight > 0 ? f->weight : 1;
  if (st) {
    __sync_fetch_and_add(&st->count, w);
    __sync_fetch_and_add(&st->ns, dur * w);
    __u32 b = log2_bucket(dur);
    if (b < VS_HIST_BUCKETS) __sync_fetch_and_add(&st->hist[b], w);
  } else {
    bump(VS_CTR_MAP_FULL);
  }
  // At the return the frame pointer chain starts in the caller, so the caller is in the stack.
  struct sync_stack_key sk = {.pid = pid, .api = api};
  sk.stack_id = user_stack_id(ctx);
  struct count_ns* c = bpf_map_lookup_elem(&sync_stacks, &sk);
  if (!c) {
    struct count_ns zero = {};
    bpf_map_update_elem(&sync_stacks, &sk, &zero, BPF_NOEXIST);
    c = bpf_map_lookup_elem(&sync_stacks, &sk);
  }
  if (c) {
    __sync_fetch_and_add(&c->count, w);
    __sync_fetch_and_add(&c->ns, dur * w);
  }
  emit(api, VS_CLASS_SYNC, f->start_ns, dur, 0, 0, 0, 0, 0);
}

static __always_inline void finish_alloc(struct pt_regs* ctx, __u32 api, __u32 pid,
                                         const volatile struct api_spec* s, struct inflight* f) {
  __u64 addr = 0;
  if (f->out == 0) {
    addr = PT_REGS_RC(ctx);
  } else if (bpf_probe_read_user(&addr, sizeof(addr), (void*)f->out) != 0) {
    return;
  }
  if (addr == 0) return;
  __u32 domain = s->domain;
  struct alloc_key k = {.pid = pid, .domain = domain, .addr = addr};
  struct alloc_info a = {
      .size = f->size, .start_ns = f->start_ns, .api = api, .device = f->device};
  a.stack_id = user_stack_id(ctx);
  // BPF_NOEXIST: an allocator entry point that calls another traced one (raw_alloc calling
  // malloc) reports the same block twice; it is counted once.
  if (bpf_map_update_elem(&outstanding, &k, &a, BPF_NOEXIST) != 0) {
    if (!bpf_map_lookup_elem(&outstanding, &k)) bump(VS_CTR_MAP_FULL);
    return;
  }
  struct mem_stats* m = mem_of(pid, domain, f->device);
  if (m) {
    __sync_fetch_and_add(&m->allocations, 1);
    __s64 now = __sync_fetch_and_add(&m->current, (__s64)f->size) + (__s64)f->size;
    for (int i = 0; i < 4; i++) {  // Raise the peak; a few tries against concurrent updates.
      __s64 peak = m->peak;
      if (now <= peak) break;
      if (__sync_val_compare_and_swap(&m->peak, peak, now) == peak) break;
    }
    __u32 b = log2_bucket(f->size);
    if (b < VS_HIST_BUCKETS) __sync_fetch_and_add(&m->hist[b], 1);
  }
  emit(api, VS_CLASS_ALLOC, f->start_ns, bpf_ktime_get_ns() - f->start_ns, 0, f->size, addr, 0, 0);
}

static __always_inline void finish_func_name(__u32 pid, struct inflight* f) {
  __u64 handle = 0;
  if (bpf_probe_read_user(&handle, sizeof(handle), (void*)f->out) != 0 || handle == 0) return;
  struct func_name_key k = {.pid = pid, .handle = handle};
  if (bpf_map_update_elem(&func_names, &k, &zero_name, BPF_ANY) != 0) {
    bump(VS_CTR_MAP_FULL);
    return;
  }
  struct func_name* n = bpf_map_lookup_elem(&func_names, &k);
  if (n) bpf_probe_read_user_str(n->name, sizeof(n->name), (void*)f->name);
}

static __always_inline void finish_ctx_new(__u64 pid_tgid, const volatile struct api_spec* s,
                                           struct inflight* f) {
  __u64 handle = 0;
  if (bpf_probe_read_user(&handle, sizeof(handle), (void*)f->out) != 0 || handle == 0) return;
  struct ctx_key k = {.pid = pid_tgid >> 32, .ctx = handle};
  __u32 device = f->device;
  if (bpf_map_update_elem(&ctx_devices, &k, &device, BPF_ANY) != 0) bump(VS_CTR_MAP_FULL);
  if (s->make_current) set_thread_device(pid_tgid, device);
}

SEC("uretprobe")
int vs_return(struct pt_regs* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 pid = id >> 32;
  if (!is_traced(pid)) return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  if (cookie >= VS_MAX_APIS) return 0;
  __u32 api = (__u32)cookie;
  struct inflight_key k = {.pid = pid, .tid = (__u32)id, .api = api};
  struct inflight* p = bpf_map_lookup_elem(&inflights, &k);
  if (!p) return 0;  // Sampled out, or entered before the probe was attached.
  struct inflight f = *p;
  bpf_map_delete_elem(&inflights, &k);
  const volatile struct api_spec* s = &specs[api];
  if (s->check_rc && PT_REGS_RC(ctx) != 0) return 0;
  switch (s->klass) {
    case VS_CLASS_SYNC: finish_sync(ctx, api, pid, &f); break;
    case VS_CLASS_ALLOC: finish_alloc(ctx, api, pid, s, &f); break;
    case VS_CLASS_FUNC_NAME: finish_func_name(pid, &f); break;
    case VS_CLASS_SET_DEVICE: set_thread_device(id, f.device); break;
    case VS_CLASS_CTX_NEW: finish_ctx_new(id, s, &f); break;
    default: break;
  }
  return 0;
}

// On the executable's entry point: a command started held (SpawnStopped) stops here, after the
// loader mapped its libraries and before main, so user space can attach and resume it.
SEC("uprobe")
int vs_stop_at_entry(struct pt_regs* ctx) {
  __u32 pid = bpf_get_current_pid_tgid() >> 32;
  if (!bpf_map_lookup_elem(&stop_at_entry, &pid)) return 0;
  bpf_map_delete_elem(&stop_at_entry, &pid);
  bpf_send_signal(19 /* SIGSTOP */);
  return 0;
}
