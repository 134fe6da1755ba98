// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's CPU profile endpoints (docs/protocols.md "CPU profile upload"):
//   POST /api/v1/cpu-profiles?job_id=J&host=H&start_ns=S&end_ns=E&frequency_hz=F
//        one sampling window of vigild's continuous mode, folded stacks (gzip or plain)
//   GET  /api/v1/cpu-profiles?job_id=J[&host=H][&since=..][&until=..][&limit=N]   list
//   GET  /api/v1/cpu-profiles/<id>[?format=json|folded|pprof|html]                 one window
//   GET  /api/v1/jobs/<id>/cpu-profile[?since&until&host&by_host=1&format=...]     merged
// json is the summary with the hottest functions (`top`, `?top=N`; a job without profiles in the
// window answers "profiles": 0, the other formats 404), html the self-contained
// flame graph page (profile/flamegraph_html.h). A write needs the token of the host it names
// and a job that host reported (ledger_host_jobs.h), or an operator token. Registered by
// FleetServer::Routes(). Owner: fleet. Handlers run on httplib's thread pool; the store is
// thread-safe.
#pragma once

#include <cstddef>

#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace vigil {

// `keep_per_job_host`: windows kept per (job, host); the oldest go first.
void RegisterCpuProfileRoutes(httplib::Server& server, LedgerStore* store, RequestGuard guard,
                              size_t keep_per_job_host);

}  // namespace vigil
