// SPDX-License-Identifier: Apache-2.0
// The in-memory model of one rank's Kineto trace: columnar tables (one vector per field) so a
// multi-GB trace costs a fraction of its JSON size. Times are int64 nanoseconds exactly as the
// trace wrote them (relative to the trace's own zero; add base_time_ns for Unix time). Built by
// the reader on one thread, then read-only and safe to share between threads.
// Owner: trace.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/model/dict_column.h"
#include "trace/model/index_column.h"
#include "trace/model/memory_table.h"
#include "trace/model/near_column.h"
#include "trace/model/packed_column.h"
#include "trace/model/string_table.h"

namespace vigil::trace {

// What an event is, from its category (every Kineto era maps here).
enum class EventKind : uint8_t {
  kCpuOp,              // cpu_op, Operator
  kUserAnnotation,     // user_annotation
  kPythonFunction,     // python_function
  kRuntime,            // cuda_runtime, Runtime, mtia_runtime (HIP traces use cuda_runtime too)
  kDriver,             // cuda_driver
  kKernel,             // kernel, Kernel, mtia_ccp_events
  kMemcpy,             // gpu_memcpy, Memcpy
  kMemset,             // gpu_memset, Memset
  kGpuUserAnnotation,  // gpu_user_annotation
  kCudaSync,           // cuda_sync
  kTraceSpan,          // Trace (the profiler's own span)
  kOther,              // any other category (counted in data quality)
};

EventKind KindFromCategory(std::string_view cat, bool* known);
std::string_view KindName(EventKind kind);
inline bool IsGpuKind(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset;
}
inline bool IsCpuSideKind(EventKind k) {
  return k == EventKind::kCpuOp || k == EventKind::kUserAnnotation ||
         k == EventKind::kPythonFunction || k == EventKind::kRuntime || k == EventKind::kDriver;
}

inline constexpr uint32_t kNoIndex = 0xffffffffu;

// Launch geometry and occupancy hints that Kineto writes on kernel events.
struct KernelArgs {
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers = -1;
  int64_t shared_memory = -1;
  float occupancy_pct = -1;  // "est. achieved occupancy %"
  float blocks_per_sm = -1;
  float warps_per_sm = -1;
};

// Extra arguments of CPU ops that some analyses need (collectives, FLOPs).
struct OpArgs {
  double flops = -1;           // "flops" (with_flops=True)
  int64_t in_msg_bytes = -1;   // "In msg size" (collectives)
  uint32_t collective = 0;     // "Collective name", interned
  int64_t seq = -1;            // "Seq" of collectives
  uint32_t process_group = 0;  // "Process Group Name"
  double memory_bw_gbps = -1;  // "memory bandwidth (GB/s)" of memcpy/memset rows, -1 if absent
  // cuda_sync "Event Sync" / "Stream Wait Event" rows: the stream and the cudaEventRecord call
  // (its correlation) whose work the wait is on, -1 if absent.
  int64_t wait_on_stream = -1;
  int64_t wait_on_record_corr = -1;
};

// The recorded inputs of a cpu_op (record_shapes=True: args "Input Dims", "Input type",
// "Input Strides", "Concrete Inputs"), kept as the JSON text the trace wrote: ids into
// RankTrace::shape_text, 0 when the arg is absent. Operators called alike share one entry; the
// work model parses an entry only when it asks for it (analysis/op_inputs.h).
struct OpShapes {
  uint32_t dims = 0;
  uint32_t types = 0;
  uint32_t strides = 0;
  uint32_t concrete = 0;
};

// Complete ("X") events, one column per field. Most columns are stored packed
// (model/packed_column.h: 1-4 bytes a row, exact wide values on read), so a row costs ~30 bytes
// rather than 93; read them by index (e.dur[i]) or iterate.
struct EventTable {
  TimeColumn ts;                       // ns
  PackedColumn<int64_t, int32_t> dur;  // ns
  PackedColumn<uint32_t, uint16_t> name;
  PackedColumn<uint32_t, uint16_t> cat;
  std::vector<EventKind> kind;
  DictColumn pid;
  DictColumn tid;
  DictColumn stream;                     // args.stream, -1 when absent
  PackedColumn<int32_t, int8_t> device;  // args.device, -1 when absent
  IdColumn correlation;                  // args.correlation, -1 when absent
  IdColumn external_id;                  // args["External id"], -1 when absent
  PackedColumn<int64_t, int16_t> bytes;  // args.bytes, -1 when absent
  IndexColumn kargs;                     // index into RankTrace::kernel_args or kNoIndex
  IndexColumn oargs;                     // index into RankTrace::op_args or kNoIndex
  IndexColumn shapes;                    // index into RankTrace::op_shapes or kNoIndex

  size_t size() const { return ts.size(); }
  int64_t end(size_t i) const { return ts[i] + dur[i]; }
  void Reserve(size_t n);
};

// Flow endpoints (ac2g, async_cpu_to_gpu, fwdbwd). No analysis needs them (GPU work links to its
// launch by correlation id), so the reader stores them only when asked (ReadOptions::keep_flows).
struct FlowEvent {
  int64_t ts = 0;
  int64_t id = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  uint32_t cat = 0;
  bool start = false;
};

struct DeviceProps {
  int32_t id = -1;
  std::string name;
  int64_t total_memory = -1;
  int32_t num_sms = -1;
  int32_t compute_major = -1;
  int32_t compute_minor = -1;
};

struct TraceMeta {
  int32_t rank = -1;  // distributedInfo.rank, else from the file name, else -1
  bool rank_from_file_name = false;
  int32_t world_size = -1;
  std::string backend;
  int64_t base_time_ns = 0;  // baseTimeNanoseconds
  bool has_base_time = false;
  std::string schema_version;
  bool with_flops = false;
  std::string runtime_family;  // "cuda", "hip" or "" (from runtime names)
  std::vector<DeviceProps> devices;
};

// What was odd in the file; every count is reported, nothing is silently dropped.
struct DataQuality {
  bool truncated = false;
  std::string truncation_detail;
  uint64_t bytes_read = 0;  // uncompressed JSON bytes consumed
  uint64_t events_total = 0;
  uint64_t events_unparsable = 0;
  uint64_t events_without_cat = 0;
  uint64_t negative_durations = 0;
  uint64_t float_timestamps = 0;  // events whose ts/dur had a fraction
  uint64_t gpu_without_launch = 0;
  uint64_t launches_without_gpu = 0;
  uint64_t launches = 0;  // runtime/driver calls that put work on a GPU stream
  uint64_t overlapping_kernels_same_stream = 0;
  uint64_t python_functions_skipped = 0;  // not stored (ReadOptions::keep_python_functions)
  uint64_t flow_events = 0;               // "s"/"f" endpoints; stored if ReadOptions::keep_flows
  std::map<std::string, uint64_t> unknown_categories;
};

// A ProfilerStep#N range on the CPU timeline.
struct Step {
  int64_t number = -1;
  int64_t ts = 0;
  int64_t dur = 0;
  uint32_t row = kNoIndex;
};

struct StreamInfo {
  int32_t device = -1;
  int64_t stream = -1;
  uint64_t events = 0;
  int64_t busy_ns = 0;  // sum of event durations
};

// Derived links, filled by LinkTrace (model/linker.h) after reading.
struct Links {
  std::vector<uint32_t> gpu;  // kernel/memcpy/memset rows sorted by (ts, row)
  // Per row, kNoIndex when none (IndexColumn: only the rows that have one cost 4 bytes).
  IndexColumn launcher;     // GPU rows: the runtime/driver row with the same correlation
  IndexColumn parent;       // CPU-side rows: the enclosing CPU-side event on the same thread
  IndexColumn launched;     // runtime/driver rows: the first GPU row with the same correlation
  std::vector<Step> steps;  // sorted by ts
  std::vector<StreamInfo> streams;
  std::vector<uint32_t> graph_launches;  // cudaGraphLaunch / hipGraphLaunch rows
  uint64_t graph_kernels = 0;            // GPU events launched by them
  int64_t first_ts = 0;                  // earliest event start (ns)
  int64_t last_end = 0;                  // latest event end (ns)
};

// Everything read from one rank's file.
struct RankTrace {
  std::string path;
  TraceMeta meta;
  StringTable strings;
  EventTable events;
  std::vector<KernelArgs> kernel_args;  // distinct values: rows with the same args share one
  std::vector<OpArgs> op_args;
  std::vector<OpShapes> op_shapes;  // distinct recorded inputs of cpu_ops
  StringTable shape_text;           // their JSON text
  // (row, kernel name) of launch calls whose args name the kernel (HIP traces do), by row.
  std::vector<std::pair<uint32_t, uint32_t>> launch_kernels;
  MemoryTable memory;
  std::vector<FlowEvent> flows;
  DataQuality quality;
  Links links;
  bool any_float_ts = false;          // HTA rounds only float traces; kept for --hta-compat
  bool keep_python_functions = true;  // reader setting
  bool keep_flows = true;             // reader setting
};

}  // namespace vigil::trace
