// SPDX-License-Identifier: Apache-2.0
// An insight: one finding of the rule engine, with the evidence behind it (events, steps or
// ranks, with timestamps), the estimated gain and the fix. Rules live one per file in this
// directory and are listed in insights/rules.cc. Plain value types.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::trace {

enum class Severity : uint8_t { kInfo, kWarning, kCritical };
std::string_view SeverityName(Severity s);

struct Evidence {
  std::string what;  // "kernel", "step", "rank", "runtime call", "memcpy", ...
  std::string name;  // the event name, or a description
  int32_t rank = -1;
  int64_t ts_ns = 0;  // trace clock (add the rank's baseTimeNanoseconds for Unix time)
  int64_t dur_ns = 0;
  double value = 0;  // the number that made it evidence (gap, bytes, ratio, ...)
};

struct Insight {
  std::string id;  // "launch_bound", ...
  Severity severity = Severity::kInfo;
  std::string title;
  std::string detail;
  std::vector<Evidence> evidence;
  double estimated_gain_pct = 0;  // of the analysed GPU time
  std::string recommendation;
};

// Every rule's thresholds, documented in docs/trace-json-schema.md ("Insight rules").
struct InsightThresholds {
  double dataloader_idle_pct = 10;       // host-wait share of a step that is data loading
  double low_utilization_busy_pct = 60;  // GPU busy below this share of the span
  double no_tensor_cores_gemm_pct = 20;  // GEMM share of compute without tensor-core kernels
  double launch_bound_short_pct = 50;    // share of kernels shorter than their launch call
  int64_t launch_bound_max_kernel_ns = 10'000;
  double excessive_sync_pct = 5;  // CPU time blocked in synchronisation, of the span
  uint64_t excessive_sync_count_per_step = 10;
  uint64_t pageable_min_bytes = 1 << 20;     // pageable copies worth reporting
  double exposed_comm_pct = 10;              // exposed communication, of the span
  double straggler_pct = 10;                 // a rank's step time above the median by this much
  double memory_near_capacity_pct = 90;      // peak allocated of device memory
  uint64_t unfused_optimizer_kernels = 200;  // optimizer kernels per step to call it unfused
};

}  // namespace vigil::trace
