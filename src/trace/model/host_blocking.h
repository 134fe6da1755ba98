// SPDX-License-Identifier: Apache-2.0
// Which CUDA and HIP runtime/driver calls block the host thread until the GPU (or the copy engine)
// has caught up: one documented table of API names (docs/analyze.md, "Which calls block the
// host"), and a row-level test that settles the calls whose blocking depends on the memory
// involved (an async copy to or from pageable host memory is staged and waits) by looking at the
// copy the call launched, linked by correlation id. The sync analysis, the critical path and the
// linker's IsSyncName read it; nothing else decides what a sync is.
// Owner: trace.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "trace/model/trace_model.h"

namespace vigil::trace {

enum class HostBlocking : uint8_t {
  kNever,     // returns once the work is queued (or polls without waiting)
  kPageable,  // blocks when the copy involves pageable (not page-locked) host memory
  kAlways,    // blocks until the GPU work it names (or all prior work) is done
};

// Why the host blocked, for the sync report.
enum class BlockKind : uint8_t {
  kNone,
  kExplicitSync,  // cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, ...
  kBlockingCopy,  // synchronous copy API (cudaMemcpy, hipMemcpy, cuMemcpyDtoH, ...)
  kPageableCopy,  // async copy API whose copy touched pageable host memory
  kAllocation,    // cudaMalloc/cudaFree and friends (implicit device synchronisation)
};

struct HostBlockingRule {
  std::string_view api;  // exact name after NormalizeApiName
  HostBlocking blocks;
  BlockKind kind;  // when it blocks
  std::string_view why;
};

// The whole table, CUDA runtime, CUDA driver and HIP, in documentation order.
std::span<const HostBlockingRule> HostBlockingTable();

// Drops the suffixes CUPTI and the HIP tracer add to a name: "_v3020", "_v2", "_ptsz", "_ptds",
// "_spt" ("cudaMemcpyAsync_v3020" -> "cudaMemcpyAsync", "cuMemcpyDtoH_v2" -> "cuMemcpyDtoH").
std::string_view NormalizeApiName(std::string_view name);

// The table's row for a runtime/driver call name, nullptr when the name is not in the table
// (treated as not blocking: kernel launches, event records, queries, graph launches, ...).
const HostBlockingRule* FindHostBlockingRule(std::string_view api);

// Name-level answer: kNever for names not in the table.
HostBlocking HostBlockingOfName(std::string_view api);

// Row-level answer for a runtime/driver row of a linked trace: kAlways calls block, except a
// synchronous device-to-device copy (CUDA queues it without host synchronisation); kPageable
// calls block when the copy they launched names pageable host memory ("Memcpy DtoH (Device ->
// Pageable)"); kNone when the row does not block the host or is not a runtime/driver call.
BlockKind HostBlockKind(const RankTrace& trace, uint32_t row);
inline bool BlocksHost(const RankTrace& trace, uint32_t row) {
  return HostBlockKind(trace, row) != BlockKind::kNone;
}

std::string_view BlockKindName(BlockKind kind);         // "explicit_sync", "blocking_copy", ...
std::string_view HostBlockingName(HostBlocking block);  // "always", "pageable", "never"

}  // namespace vigil::trace
