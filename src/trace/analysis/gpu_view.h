// SPDX-License-Identifier: Apache-2.0
// The GPU work the breakdown analyses look at, as flat arrays. In default mode: every kernel,
// memcpy and memset of the trace, nanosecond times, our classifier. In HTA-compatible mode: the
// exact rows Holistic Trace Analysis keeps (its step dropping and correlation filter, rows with a
// "stream" argument), rounded to integer microseconds the way HTA rounds them.
// Rows are sorted by start time (ts). Owner: trace. Built once per rank; read-only afterwards.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/analysis_config.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

inline constexpr int64_t kNoTime = INT64_MIN;

struct GpuView {
  int64_t unit_ns = 1;                 // 1 (ns) by default, 1000 in HTA mode (integer us)
  const EventTable* events = nullptr;  // the rank's table, which `row` indexes
  std::vector<int64_t> ts;
  std::vector<int64_t> dur;
  std::vector<KernelClass> cls;
  std::vector<int64_t> launch_ts;   // start of the launching runtime call, kNoTime if none
  std::vector<int64_t> launch_dur;  // its duration
  std::vector<uint32_t> row;        // row in RankTrace::events
  // 1 for kernels, memcpys and memsets. HTA mode also keeps other rows that carry a stream
  // (cuda_sync "Stream Sync" as OTHER, triton cpu_ops classified by name): they count in the
  // temporal and kernel breakdowns but not in the idle breakdown, like HTA.
  std::vector<uint8_t> is_kernel;
  std::vector<int64_t> kept_steps;  // ProfilerStep numbers analysed
  bool steps_dropped = false;       // HTA dropped the last step
  size_t size() const { return ts.size(); }
  int64_t end(size_t i) const { return ts[i] + dur[i]; }
  // Read through `row` rather than copied: the view is held through every analysis.
  uint32_t name_of(size_t i) const { return events->name[row[i]]; }
  int64_t stream_of(size_t i) const { return events->stream[row[i]]; }
  void Reserve(size_t n);  // exactly: every analysis holds the view, so no growth slack
};

// HTA's per-row view of the whole trace (only used with hta_compat).
struct HtaRows {
  std::vector<uint32_t> row;  // event rows kept, with HTA's duplicates
  std::vector<int64_t> ts;    // integer us after HTA's rounding
  std::vector<int64_t> dur;
  bool filtered = false;
};

HtaRows BuildHtaRows(const RankTrace& trace);
GpuView BuildGpuView(const RankTrace& trace, const AnalysisConfig& config);

}  // namespace vigil::trace
