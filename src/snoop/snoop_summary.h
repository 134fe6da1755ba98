// SPDX-License-Identifier: Apache-2.0
// What a snoop session learned, per traced process: the data model between the probes (which
// fill it from BPF maps and the ring buffer) and every output (terminal view, --json, Chrome
// trace, the bpf_cuda collector). Plain values; docs/snoop-json-schema.md documents the JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::snoop {

struct KernelLaunches {
  std::string name;  // Demangled kernel name, or "[unknown 0x...]" when unresolved.
  uint64_t count = 0;
};

struct DurationBucket {
  uint64_t upper_ns = 0;  // Calls that took <= upper_ns (powers of two).
  uint64_t count = 0;
};

struct ApiCalls {
  std::string api;  // "cudaStreamSynchronize", "cuCtxSynchronize", ...
  uint64_t count = 0;
  double seconds = 0;                     // Time blocked: entry to return, summed.
  std::vector<DurationBucket> histogram;  // Non-empty buckets, ascending.
};

struct CallStack {
  std::vector<std::string>
      frames;  // Innermost first, "function (module)" or Python "fn (file:line)".
};

struct SyncStack {
  CallStack stack;
  std::string api;
  uint64_t count = 0;
  double seconds = 0;
};

struct LeakGroup {
  uint64_t bytes = 0;  // Outstanding bytes of allocations older than the leak age.
  uint64_t count = 0;
  std::string api;  // Allocating call ("cudaMalloc", "cuMemCreate", "caching_allocator").
  CallStack stack;
};

struct CopyKind {
  std::string kind;  // "HtoD", "DtoH", "DtoD", "HtoH", "default" (cudaMemcpyDefault), plus
                     // "_pinned" / "_pageable" suffix for host sides when known.
  uint64_t count = 0;
  uint64_t bytes = 0;
};

struct SizeBucket {
  uint64_t upper_bytes = 0;  // Allocations of size <= upper_bytes (powers of two).
  uint64_t count = 0;
};

// One device's share of a MemoryView (the device index CUDA numbers it by).
struct DeviceMemory {
  int device = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t outstanding_bytes = 0;
  uint64_t peak_bytes = 0;  // This device's own high-water mark.
};

struct MemoryView {
  // Totals over by_device; peak_bytes is the sum of the devices' peaks (one device: its peak).
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t outstanding_bytes = 0;
  uint64_t peak_bytes = 0;
  std::vector<LeakGroup> leaks;  // Largest first.
  std::vector<SizeBucket> size_histogram;
  uint64_t mapped_bytes = 0;  // cuMemMap minus cuMemUnmap (virtual-memory API), driver view.
  uint64_t host_outstanding_bytes = 0;  // Pinned host memory (cudaMallocHost/HostAlloc), kept
                                        // out of the device figures above; driver view only.
  uint64_t host_peak_bytes = 0;
  std::vector<DeviceMemory> by_device;  // Ascending device; pinned host memory not included.
};

struct ProcessSummary {
  int pid = 0;
  std::string command;                 // /proc/PID/comm
  std::vector<std::string> libraries;  // What was attached to: paths as the process sees them,
                                       // "(static in /path/exe)" for a static cudart.
  bool exited = false;                 // The process exited during the session.
  std::string python;  // "3.11": CPython, its stacks carry Python frames; empty otherwise.
  uint64_t launches_total = 0;
  std::vector<KernelLaunches> launches_by_kernel;  // Most launched first.
  uint64_t graph_launches = 0;
  uint64_t syncs_count = 0;
  double syncs_seconds = 0;
  std::vector<ApiCalls> syncs_by_api;
  std::vector<SyncStack> syncs_by_stack;  // Top stacks by time.
  MemoryView memory;            // The driver's view: cudaMalloc*, cuMemAlloc*, cuMemCreate/Map.
  MemoryView framework_memory;  // PyTorch's caching allocator, when libc10_cuda is mapped.
  bool has_framework_memory = false;
  std::vector<CopyKind> copies;
};

struct SessionSummary {
  double duration_seconds = 0;
  bool sampled = false;       // The event budget was exceeded and events were sampled.
  double sample_ratio = 1.0;  // Fraction of events recorded when sampled.
  uint64_t events_seen = 0;
  uint64_t events_dropped = 0;  // Ring-buffer overflow (raw trace only).
  // True: stacks of CPython processes carry their Python frames (ProcessSummary::python says
  // which processes); false: native frames only (said in every output).
  bool python_frames = false;
  std::vector<ProcessSummary> processes;
  std::vector<std::string> warnings;  // One line each, shown in every output.
};

}  // namespace vigil::snoop
