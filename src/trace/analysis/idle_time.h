// SPDX-License-Identifier: Apache-2.0
// Idle-time breakdown per GPU stream with HTA's definitions: each gap before a kernel is "host
// wait" when the kernel's launch call started after the previous kernel ended (the CPU was late),
// else "kernel wait" when the gap is under the threshold (back-to-back launch overhead), else
// "other". Default mode uses the running maximum end on the stream and ignores negative gaps;
// HTA mode reproduces HTA (previous row's end, negative gaps counted).
// Owner: trace. Pure function of a GpuView.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

struct IdleStats {
  int64_t time = 0;  // view units
  uint64_t count = 0;
  double mean = 0;
  int64_t min = 0;
  int64_t max = 0;
};

struct StreamIdle {
  int64_t stream = -1;
  IdleStats host_wait;
  IdleStats kernel_wait;
  IdleStats other;
  int64_t Total() const { return host_wait.time + kernel_wait.time + other.time; }
};

struct IdleBreakdown {
  std::vector<StreamIdle> streams;  // sorted by stream id
  int64_t host_wait = 0;
  int64_t kernel_wait = 0;
  int64_t other = 0;
};

IdleBreakdown ComputeIdleBreakdown(const GpuView& view, int64_t kernel_wait_threshold,
                                   bool hta_compat);

}  // namespace vigil::trace
