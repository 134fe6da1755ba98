// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's profiling endpoints (docs/protocols.md "Profiling as a service" and "Trace
// upload"): POST /api/v1/profiling (create a request for a job), GET /api/v1/profiling (requests,
// newest first, and the automatic trigger's decisions), GET /api/v1/profiling/<id>, and
// POST /api/v1/traces (a daemon's upload of one finished trace file, authorised with that host's
// token). With profiling off (or no service) every one answers 404 saying so.
// Registered by FleetServer::Routes(). Owner: fleet. Handlers run on httplib's thread pool; the
// service is thread-safe and must outlive the server.
#pragma once

#include "fleet/fleet_server.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace vigil {

class ProfilingService;

void RegisterProfilingRoutes(httplib::Server& server, ProfilingService* service,
                             RequestGuard guard);

}  // namespace vigil
