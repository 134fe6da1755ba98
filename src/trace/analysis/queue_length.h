// SPDX-License-Identifier: Apache-2.0
// Launch queue length per GPU stream, as Holistic Trace Analysis defines it
// (TraceCounters.get_queue_length_time_series): +1 when a runtime call enqueues work on the
// stream (at the call's start), -1 when that work starts executing on the GPU; the series has one
// point per change. A queue that stays long means the CPU runs far ahead of the GPU (GPU-bound);
// one that stays near zero means the GPU waits for launches (CPU/launch-bound). Per stream we
// report pandas' describe() of the series points (HTA's queue_length_summary), the time-weighted
// mean and the time spent at the maximum.
// Default mode: every launch API (CUDA, driver, HIP, graph launches count one per GPU event) and
// nanosecond times. HTA mode: HTA's rows (step dropping, rounding to integer us) and HTA's launch
// call names. Owner: trace. Pure function of a linked RankTrace.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/analysis/describe.h"
#include "trace/analysis/gpu_view.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct QueuePoint {
  int64_t ts = 0;  // summary units (ns, or us in HTA mode)
  int32_t length = 0;
};

struct StreamQueueLength {
  int32_t device = -1;
  int64_t stream = -1;
  Describe stats;                  // over the series points (HTA's summary)
  double time_weighted_mean = 0;   // over [first point, last point]
  int64_t time_at_max = 0;         // summary units
  std::vector<QueuePoint> series;  // downsampled to at most kMaxQueuePoints points for charts
};

inline constexpr size_t kMaxQueuePoints = 400;

struct QueueLengthSummary {
  int64_t unit_ns = 1;
  std::vector<StreamQueueLength> streams;  // by (device, stream)
};

// Order of a launch and a GPU start at the same time (only integer-us traces have many): launch
// first by default. HTA sorts with an unstable quicksort, so its order there is arbitrary; the
// HTA comparison brackets its values between the two orders.
enum class QueueTies : uint8_t { kLaunchFirst, kStartFirst };

// `hta_rows` selects HTA mode (pass BuildHtaRows' result), nullptr the default mode.
QueueLengthSummary ComputeQueueLength(const RankTrace& trace, const HtaRows* hta_rows,
                                      QueueTies ties = QueueTies::kLaunchFirst);

// HTA's launch calls for the queue length (symbol table get_runtime_launch_events_mask).
bool IsHtaQueueLaunchName(std::string_view name);

}  // namespace vigil::trace
