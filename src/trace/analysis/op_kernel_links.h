// SPDX-License-Identifier: Apache-2.0
// Links every GPU kernel to the operator whose work it does: the kernel's launch call (by
// correlation id), then the nearest enclosing cpu_op that the work model knows (walking out
// through the CPU call tree: aten::linear > aten::addmm > cudaLaunchKernel gives addmm), or, where
// the launch call is missing, the cpu_op with the kernel's External id. An operator's kernels
// are all those it encloses that no nearer modelled operator claims; each gets a share of the
// operator's work in proportion to its measured time. Kernels replayed from a CUDA/HIP graph
// get the operator of their capture-time launch (graph_capture_links.h) when captures are
// given: one operator per replay, its work shared across the kernels of that replay.
// Owner: trace. Pure function of the trace, its GpuView and a work model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/analysis/gpu_view.h"
#include "trace/analysis/graph_capture_links.h"
#include "trace/analysis/work_model/op_work.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

// The work model, injected so tests (and callers with their own models) can pass one;
// ModelOperator (work_model/op_models.h) in production.
using OpModelFn = std::function<std::optional<OpWork>(std::string_view, const OpInputs&)>;

struct LinkedOp {
  uint32_t row = kNoIndex;  // the cpu_op's row in the events of `source`
  // The trace the row belongs to: the analysed one, or a graph-capture trace.
  const RankTrace* source = nullptr;
  OpWork work;
  int64_t kernel_time = 0;  // sum of its kernels' durations, view units
  uint32_t kernels = 0;
};

struct OpKernelLinks {
  std::vector<uint32_t> op_of;  // per GpuView row: index into ops, kNoIndex when none
  std::vector<LinkedOp> ops;    // modelled operators that launched at least one kernel
};

OpKernelLinks LinkKernelsToOps(const RankTrace& trace, const GpuView& view, const OpModelFn& model,
                               const GraphCaptureLinks* captures = nullptr);

}  // namespace vigil::trace
