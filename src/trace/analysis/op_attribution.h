// SPDX-License-Identifier: Apache-2.0
// Which CPU operator and which module launched each GPU event, and its kernel category.
// The operator is the innermost cpu_op enclosing the launching runtime call on its thread (the
// linker's parent links); a kernel replayed by cudaGraphLaunch / hipGraphLaunch is attributed to
// the operator enclosing the graph launch (often none: graphs are replayed from Python) and
// flagged via_graph. The module is the innermost `nn.Module: X` Python frame or user annotation
// (record_function range, not ProfilerStep#) enclosing the launch, where the trace has them.
// Covers every kernel, memcpy and memset of the trace in nanoseconds, in both analysis modes.
// Owner: trace. Pure function of a linked trace.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "trace/analysis/kernel_category.h"
#include "trace/analysis/kernel_classifier.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct CategoryTime {
  int64_t ns = 0;  // sum of the GPU events' durations
  uint64_t count = 0;
};

struct OpAttribution {
  // Parallel to RankTrace::links.gpu (GPU rows sorted by start).
  std::vector<uint32_t> op;      // innermost operator row enclosing the launch, or kNoIndex
  std::vector<uint32_t> module;  // innermost module/annotation row enclosing it, or kNoIndex
  std::vector<KernelCategory> category;
  std::vector<uint8_t> via_graph;  // 1: replayed by a graph launch
  std::array<CategoryTime, kKernelCategoryCount> by_category{};
  int64_t gpu_ns = 0;           // sum over every GPU event
  uint64_t with_op = 0;         // GPU events attributed to an operator
  uint64_t with_module = 0;     // ... to a module or annotation
  uint64_t graph_events = 0;    // GPU events replayed by graph launches
  uint64_t without_launch = 0;  // no launching call in the trace (nothing to attribute to)
  size_t size() const { return op.size(); }
};

// A CPU operator row: a cpu_op that is not a ProfilerStep#N range.
bool IsOperatorRow(const RankTrace& trace, uint32_t row);
// A module row: an `nn.Module: X` python_function frame, or a user annotation that is not a
// ProfilerStep#N range.
bool IsModuleRow(const RankTrace& trace, uint32_t row);

// The innermost operator (module) row enclosing CPU-side row `row`, row itself included;
// kNoIndex when none.
uint32_t EnclosingOperator(const RankTrace& trace, uint32_t row);
uint32_t EnclosingModule(const RankTrace& trace, uint32_t row);

OpAttribution AttributeKernels(const RankTrace& trace, const KernelClassifier& classifier);

}  // namespace vigil::trace
