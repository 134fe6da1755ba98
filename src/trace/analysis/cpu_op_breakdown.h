// SPDX-License-Identifier: Apache-2.0
// CPU operator breakdown: per operator (cpu_op name) and per module (`nn.Module: X` frame or
// user annotation) the number of calls, total and self CPU time, and the GPU time of the work
// they launched. Works on CPU-only traces too (the GPU columns are then zero).
// Self time is the time during which a row is the innermost open operator (module) of its
// thread: total minus the time of the operators nested in it. Per thread the self times add up
// to the union of the operators' time. Total time counts an instance nested inside one of the
// same name once (recursion is not double counted).
// Owner: trace. Pure function of a linked trace and its OpAttribution.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/kernel_category.h"
#include "trace/analysis/op_attribution.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct OpStat {
  uint32_t name = 0;  // id in RankTrace::strings
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
  int64_t gpu_ns = 0;            // GPU events it launched itself (it is their innermost operator)
  int64_t gpu_inclusive_ns = 0;  // ... by it or by the operators inside it
  uint64_t gpu_events = 0;       // launched itself
  // The category of most of its own GPU time; from its name when it launched nothing.
  KernelCategory category = KernelCategory::kOther;
};

struct ModuleStat {
  uint32_t name = 0;
  bool annotation = false;  // a user annotation (record_function), not an nn.Module frame
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;           // not inside a nested module or annotation
  int64_t gpu_ns = 0;            // GPU events whose innermost module is this one
  int64_t gpu_inclusive_ns = 0;  // GPU events launched anywhere inside it
  uint64_t gpu_events = 0;
};

struct ThreadOpTime {
  int64_t pid = 0;
  int64_t tid = 0;
  uint64_t operators = 0;
  int64_t busy_ns = 0;  // union of the operators' time on this thread (= the sum of their self)
};

struct CpuOpBreakdown {
  std::vector<OpStat> ops;          // by self time, largest first
  std::vector<ModuleStat> modules;  // by total time, largest first
  std::vector<ThreadOpTime> threads;
  uint64_t operator_events = 0;
  uint64_t module_events = 0;
  int64_t busy_ns = 0;            // sum over threads
  int64_t gpu_ns = 0;             // every GPU event of the trace
  int64_t gpu_attributed_ns = 0;  // ... launched inside an operator
  int64_t gpu_in_module_ns = 0;   // ... launched inside a module or annotation
  int64_t gpu_via_graph_ns = 0;   // ... replayed by graph launches
};

// Exclusive (self) time of each of `rows` (CPU-side rows, any order): per thread, the time
// during which the row is the innermost open one of the set (latest start; on equal starts the
// shorter). self[i] belongs to rows[i]; *threads (optional) gets each thread's union.
std::vector<int64_t> ExclusiveTimes(const RankTrace& trace, const std::vector<uint32_t>& rows,
                                    std::vector<ThreadOpTime>* threads);

CpuOpBreakdown ComputeCpuOpBreakdown(const RankTrace& trace, const OpAttribution& attribution);

}  // namespace vigil::trace
