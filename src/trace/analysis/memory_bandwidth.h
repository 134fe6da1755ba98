// SPDX-License-Identifier: Apache-2.0
// Memory bandwidth over time per memcpy/memset kind, as Holistic Trace Analysis defines it
// (TraceCounters.get_memory_bw_time_series / get_memory_bw_summary): each copy adds its bandwidth
// at its start and removes it at its end, so copies of one kind that overlap add up; the summary
// is pandas' describe() of the series points above zero. The bandwidth of a copy is the one
// Kineto recorded ("memory bandwidth (GB/s)", measured on the exact GPU duration) when the model
// carries it, else bytes / duration. HTA mode: HTA's rows, integer-us times (a zero duration
// counts as 1 us, like HTA), HTA's kind names ("Memcpy DtoH", "Memset", ...).
// Owner: trace. Pure function of a linked RankTrace.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/analysis/describe.h"
#include "trace/analysis/gpu_view.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct BandwidthPoint {
  int64_t ts = 0;  // summary units
  double gbps = 0;
};

struct MemoryKindBandwidth {
  std::string kind;  // "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memset", ...
  uint64_t ops = 0;
  Describe stats;                      // GB/s over the series points above zero
  double time_weighted_mean_gbps = 0;  // over the time with at least one copy running
  std::vector<BandwidthPoint> series;  // downsampled to at most kMaxBandwidthPoints
};

inline constexpr size_t kMaxBandwidthPoints = 400;

struct MemoryBandwidthSummary {
  int64_t unit_ns = 1;
  bool recorded_bandwidth = false;         // every copy carried Kineto's recorded bandwidth
  std::vector<MemoryKindBandwidth> kinds;  // by kind name
};

// A copy that ends when another of its kind starts: the default mode puts the end first (the
// two do not overlap) and restarts the sum at exactly zero whenever no copy runs; HTA mode puts
// starts first (its concatenation order; its sort is an unstable quicksort, so HTA's own order
// there is arbitrary) and keeps HTA's running floating-point sum.
enum class BandwidthTies : uint8_t { kForMode, kEndsFirst, kStartsFirst };

// `hta_rows` selects HTA mode (pass BuildHtaRows' result), nullptr the default mode.
// `recorded_gbps` (row -> GB/s) supplies Kineto's recorded bandwidths from elsewhere when the
// model does not carry them (OpArgs::memory_bw_gbps); it wins over the model.
MemoryBandwidthSummary ComputeMemoryBandwidth(
    const RankTrace& trace, const HtaRows* hta_rows,
    const std::unordered_map<uint32_t, double>* recorded_gbps = nullptr,
    BandwidthTies ties = BandwidthTies::kForMode);

// HTA's get_memory_kernel_type: "Memset", "Memcpy Unknown" or the name's first 11 characters.
std::string HtaMemoryKind(std::string_view name);

}  // namespace vigil::trace
