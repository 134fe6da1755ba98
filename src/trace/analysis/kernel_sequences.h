// SPDX-License-Identifier: Apache-2.0
// Frequent kernel sequences (fusion candidates): runs of 2 to 6 consecutive kernels on a stream
// that repeat, ranked by the time they take in total. A sequence of short element-wise kernels
// repeated thousands of times is what torch.compile or a fused kernel removes.
// Owner: trace. Pure function of a GpuView.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

struct KernelSequence {
  std::vector<uint32_t> names;  // kernel name ids, in order
  uint64_t count = 0;           // non-overlapping occurrences
  int64_t total = 0;            // GPU time of all occurrences, view units
  int64_t gaps = 0;             // idle between the kernels inside the occurrences
  size_t first = 0;             // view index of the first kernel of the first occurrence
};

std::vector<KernelSequence> FindKernelSequences(const GpuView& view, uint64_t min_count = 10,
                                                size_t max_results = 10);

}  // namespace vigil::trace
