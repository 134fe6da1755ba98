// SPDX-License-Identifier: Apache-2.0
// User-annotation breakdown: time per record_function / NVTX-style range name, on the CPU
// (user_annotation) and on the GPU (gpu_user_annotation), plus the GPU kernel time launched from
// inside each CPU range. ProfilerStep ranges are reported as steps, not here.
// Owner: trace. Pure function of a linked RankTrace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct AnnotationStat {
  std::string name;
  uint64_t count = 0;
  int64_t cpu_ns = 0;     // total duration of the CPU ranges
  int64_t gpu_ns = 0;     // total duration of the GPU ranges with that name
  int64_t kernel_ns = 0;  // GPU work launched from inside the CPU ranges (outermost only)
};

// Sorted by max(cpu, gpu) time, largest first; at most `limit`.
std::vector<AnnotationStat> AnalyzeUserAnnotations(const RankTrace& trace, size_t limit = 30);

}  // namespace vigil::trace
