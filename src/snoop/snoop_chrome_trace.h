// SPDX-License-Identifier: Apache-2.0
// `vigil snoop --chrome-trace FILE`: the raw events of a session as a Chrome trace (the JSON
// object format Perfetto UI and chrome://tracing open). Each call is an "X" slice on its
// process's thread, `ts`/`dur` in microseconds since the Unix epoch with three decimals (the
// clock and unit Kineto traces use, so the file opens next to, or merges into, a Kineto trace of
// the same process). Categories name the API group in Kineto's style ("cuda_launch",
// "cuda_sync", ...); `args` carry the kernel, bytes, copy kind, device address and whether the
// call is the runtime's, the driver's or the framework allocator's. Processes are named
// "CUDA calls: COMMAND (PID)" in process_name metadata. Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "snoop/raw_event.h"
#include "snoop/snoop_summary.h"

namespace vigil::snoop {

// "cuda_launch", "cuda_graph_launch", "cuda_sync", "cuda_alloc", "cuda_free", "cuda_memcpy",
// "cuda_api".
std::string_view ApiGroupCategory(ApiGroup group);

// "runtime" for cuda* calls, "driver" for cu* calls, "framework" otherwise (the caching
// allocator).
std::string_view ApiLayer(std::string_view api);

// The trace text. `summary` names the processes (command); a pid of an event that the summary
// lacks is named by its number only.
std::string RenderSnoopChromeTrace(std::span<const RawEvent> events, const SessionSummary& summary);

// Writes the trace to `path` atomically; the error names the path.
Status WriteSnoopChromeTrace(std::span<const RawEvent> events, const SessionSummary& summary,
                             const std::string& path);

}  // namespace vigil::snoop
