// SPDX-License-Identifier: Apache-2.0
// `vigil-fleet serve`'s profiling flags (docs/fleet.md "Profiling as a service") and the wiring of
// the profiling service and its automatic triggers from them, kept out of fleet_main.cc.
// Owner: fleet. Used by the main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"
#include "fleet/profiling_service.h"
#include "fleet/profiling_triggers.h"

namespace CLI {
class App;
}  // namespace CLI

namespace vigil {

struct ProfilingFlags {
  std::string mode = "manual";  // off|manual|auto
  std::string daemon_token_file;
  std::string trace_dir;  // "" = <ledger dir>/traces
  int64_t budget_per_hour = 4;
  double busy_below = 0.3;
  double max_stddev = 0.1;
  std::string min_running = "30m";
  std::string window = "30m";
  std::string collect_deadline = "10m";
  int64_t duration_ms = 2000;
};

void AddProfilingFlags(CLI::App* serve, ProfilingFlags* flags);

struct ProfilingStack {
  std::unique_ptr<ProfilingService> service;    // Null with --profiling=off.
  std::unique_ptr<ProfilingTriggers> triggers;  // Running with --profiling=auto.
};

// Creates the service (and starts the triggers with --profiling=auto) and points the server's
// options at it, raising the body cap to fit a trace upload. InvalidArgument for a bad flag.
StatusOr<ProfilingStack> StartProfiling(const ProfilingFlags& flags, LedgerStore* store,
                                        FleetServerOptions* server_options);

}  // namespace vigil
