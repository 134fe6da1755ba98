// SPDX-License-Identifier: Apache-2.0
// `vigil trace --wait`: follows every session on every host until each process's trace is in a
// final state or --wait-timeout passes. With --retry-busy it also waits for processes another
// trace holds: it watches each holding trace (vigilTraceStatus, or the caller's own registered
// processes in vigilTraceList where the holder is not the caller's to see), and once a process is
// free asks its daemon again for just that process, as soon as possible; progress (who holds what
// and until when, each retake) goes to stderr. Every call has the CLI's --timeout and the whole
// wait one deadline. Owner: cli. Runs on the calling thread (hosts polled in parallel).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "cli/trace_host_result.h"

namespace vigil {

// The context for one host, with `deadline_ns` as its call timeout.
CliContext TraceHostContext(const CliContext& ctx, const std::string& host, int64_t deadline_ns);
// Runs fn(i) for every host index with at most `parallel` in flight.
void ForEachTraceHost(size_t count, int parallel, const std::function<void(size_t)>& fn);

void WaitForTraces(const CliContext& ctx, const TraceCliOptions& o,
                   std::vector<HostTraceResult>* results);

}  // namespace vigil
