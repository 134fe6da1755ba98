// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's analysis endpoints (docs/protocols.md "Analysis upload"): POST /api/v1/analyses
// (a `vigil analyze --json` report, optionally gzip), GET /api/v1/analyses (list with summaries),
// GET /api/v1/analyses/<id> (one, with its full report) and GET /api/v1/workflows (fleet
// aggregates). Registered by FleetServer::Routes(); every request passes the server's guard.
// Owner: fleet. Handlers run on httplib's thread pool; the ledger store is thread-safe.
#pragma once

#include <cstddef>

#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace vigil {

// `max_report_bytes`: the largest report accepted after gunzip (413 above).
void RegisterAnalysisRoutes(httplib::Server& server, LedgerStore* store, RequestGuard guard,
                            size_t max_report_bytes);

}  // namespace vigil
