// SPDX-License-Identifier: Apache-2.0
// Trace diff: two traces (or two runs, rank by rank) compared: GPU time breakdown, mean step time,
// GPU time per kernel category, and the GPU work that changed the most matched by kernel category
// and launching operator (so an H100 and an MI300X run of one model line up although cuBLAS and
// hipBLASLt name their kernels differently), plus the kernels matched by name (meaningful between
// runs on one vendor). Pure function of two Reports.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/kernel_category.h"

namespace vigil::trace {

struct Report;

struct KernelDelta {
  std::string name;
  int64_t base_ns = 0;
  int64_t test_ns = 0;
  uint64_t base_count = 0;
  uint64_t test_count = 0;
};

struct CategoryDelta {
  KernelCategory category = KernelCategory::kOther;
  int64_t base_ns = 0;
  int64_t test_ns = 0;
  uint64_t base_count = 0;  // GPU events
  uint64_t test_count = 0;
};

// The GPU events of one kernel category launched by one operator ("" for work launched outside
// any operator, e.g. a graph replayed from Python).
struct OperatorDelta {
  KernelCategory category = KernelCategory::kOther;
  std::string op;
  int64_t base_ns = 0;
  int64_t test_ns = 0;
  uint64_t base_count = 0;  // GPU events
  uint64_t test_count = 0;
};

struct TraceDiff {
  std::string base_device, test_device;    // first device name of the first rank
  std::string base_runtime, test_runtime;  // "cuda", "hip" or ""
  int64_t base_span_ns = 0, test_span_ns = 0;
  int64_t base_compute_ns = 0, test_compute_ns = 0;
  int64_t base_idle_ns = 0, test_idle_ns = 0;
  int64_t base_comm_ns = 0, test_comm_ns = 0;
  int64_t base_step_ns = 0, test_step_ns = 0;  // mean over ranks and steps
  std::vector<CategoryDelta> categories;       // categories with GPU time in either, enum order
  std::vector<OperatorDelta> operators;        // by |test - base|, largest first, up to 20
  uint64_t operators_matched = 0;    // (category, operator) pairs with GPU time in both runs
  uint64_t operators_base_only = 0;  // ... only in base
  uint64_t operators_test_only = 0;
  int64_t matched_base_ns = 0;  // base GPU time of the matched pairs
  int64_t matched_test_ns = 0;
  std::vector<KernelDelta> kernels;  // by name; by |test - base|, largest first, up to 20
  bool SameVendor() const { return base_runtime == test_runtime; }
};

TraceDiff DiffReports(const Report& base, const Report& test);
std::string RenderTraceDiff(const TraceDiff& diff);

}  // namespace vigil::trace
