// SPDX-License-Identifier: Apache-2.0
// Control-RPC methods of trace sessions: Dynolog's setKinetOnDemandRequest (same request and
// response JSON, so `dyno gputrace` works unchanged) and Vigil's vigilTraceStart,
// vigilTraceStatus, vigilTraceCancel and vigilTraceList (docs/protocols.md, "Trace sessions").
// Mutating methods are registered with RpcAccess::kControl. Owner: ipc. The handlers are
// thread-safe (TraceService is); the service must outlive the dispatcher.
#pragma once

#include <nlohmann/json.hpp>

#include "ipc/trace_sessions.h"
#include "rpc/dispatcher.h"

namespace vigil {

// The key Vigil adds to a setKinetOnDemandRequest reply whose log path it moved into the trace
// root: {"trace_id", "requested", "log_file", "note", "files": [{"pid", "path"}]}.
inline constexpr const char* kRewrittenLogFilesKey = "vigilRewrittenLogFiles";

void RegisterTraceMethods(RpcDispatcher* dispatcher, TraceService* service);

// The handlers, exposed for tests.
nlohmann::json HandleSetKinetOnDemandRequest(TraceService* service, const nlohmann::json& request,
                                             const CallerInfo& caller);
nlohmann::json HandleVigilTraceStart(TraceService* service, const nlohmann::json& request,
                                     const CallerInfo& caller);

}  // namespace vigil
