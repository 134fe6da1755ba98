// SPDX-License-Identifier: Apache-2.0
// CPU-GPU synchronisation points: runtime calls that block the CPU until the GPU catches up
// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, blocking cudaMemcpy, their
// HIP twins), each with the operator that caused it (the outermost aten op around it, e.g.
// aten::item, aten::to / .cpu(), aten::nonzero). Pure function of a linked RankTrace.
// Owner: trace.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct SyncCount {
  uint64_t count = 0;
  int64_t dur_ns = 0;
};

struct SyncPoint {
  uint32_t row = kNoIndex;        // the runtime call
  uint32_t cause_row = kNoIndex;  // the outermost CPU op around it, if any
};

struct SyncAnalysis {
  uint64_t count = 0;
  int64_t total_ns = 0;
  std::map<std::string, SyncCount> by_api;
  std::map<std::string, SyncCount> by_cause;  // "(none)" when no CPU op encloses it
  std::vector<SyncPoint> longest;             // up to 20, longest first
  uint64_t max_per_step = 0;                  // most sync calls in one ProfilerStep
};

SyncAnalysis AnalyzeSyncPoints(const RankTrace& trace);

}  // namespace vigil::trace
