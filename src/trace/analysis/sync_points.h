// SPDX-License-Identifier: Apache-2.0
// CPU-GPU synchronisation points: runtime calls that block the host until the GPU catches up,
// as model/host_blocking.h classifies them (explicit syncs, synchronous copies, async copies that
// touch pageable host memory, allocations), each with the operator that caused it: the
// operator in the CPU call chain known to force a sync (aten::item for .item(), aten::nonzero,
// aten::is_nonzero for `if tensor:`, aten::to for .cpu(), ...), else the outermost aten op around
// the call. Pure function of a linked RankTrace.
// Owner: trace.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model/host_blocking.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct SyncCount {
  uint64_t count = 0;
  int64_t dur_ns = 0;
};

struct SyncPoint {
  uint32_t row = kNoIndex;        // the runtime call
  uint32_t cause_row = kNoIndex;  // the operator that caused it, if any
  BlockKind kind = BlockKind::kNone;
};

struct SyncAnalysis {
  uint64_t count = 0;
  int64_t total_ns = 0;
  std::map<std::string, SyncCount> by_api;
  std::map<std::string, SyncCount> by_cause;  // operator name; "(none)" when no CPU op encloses it
  std::map<std::string, SyncCount> by_kind;   // BlockKindName: explicit_sync, pageable_copy, ...
  std::vector<SyncPoint> longest;             // up to 20, longest first
  uint64_t max_per_step = 0;                  // most sync calls in one ProfilerStep
};

SyncAnalysis AnalyzeSyncPoints(const RankTrace& trace);

// What the user wrote that makes an operator synchronise ("aten::item" -> ".item() (or float(t),
// int(t))"); empty for operators not known to force a sync.
std::string_view SyncCauseHint(std::string_view op);

}  // namespace vigil::trace
