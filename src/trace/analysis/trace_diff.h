// SPDX-License-Identifier: Apache-2.0
// Trace diff: two traces (or two runs, rank by rank) compared: GPU time breakdown, mean step time,
// and the kernels whose total time changed the most (matched by name), with new and vanished
// kernels. Pure function of two Reports.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::trace {

struct Report;

struct KernelDelta {
  std::string name;
  int64_t base_ns = 0;
  int64_t test_ns = 0;
  uint64_t base_count = 0;
  uint64_t test_count = 0;
};

struct TraceDiff {
  int64_t base_span_ns = 0, test_span_ns = 0;
  int64_t base_compute_ns = 0, test_compute_ns = 0;
  int64_t base_idle_ns = 0, test_idle_ns = 0;
  int64_t base_comm_ns = 0, test_comm_ns = 0;
  int64_t base_step_ns = 0, test_step_ns = 0;  // mean over ranks and steps
  std::vector<KernelDelta> kernels;            // by |test - base|, largest first, up to 20
};

TraceDiff DiffReports(const Report& base, const Report& test);
std::string RenderTraceDiff(const TraceDiff& diff);

}  // namespace vigil::trace
