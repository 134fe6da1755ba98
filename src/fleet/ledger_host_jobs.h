// SPDX-License-Identifier: Apache-2.0
// Which jobs a host has reported, from the ledger's inventory: a job is on a host when that
// host's per-job counters named it on one of the host's GPUs (jobs -> job_gpus -> gpus ->
// hosts). A host's token may write data only about those jobs: analyses (analysis_routes.cc),
// traces its daemon took on its own (profiling_uploads.cc) and libvigil_client's job gauges
// (ledger_job_gauges.cc); an operator's token may write about any. Owner: fleet. Stateless; each
// call uses the Db or store it is given.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "fleet/ledger_store.h"
#include "fleet/sqlite_db.h"

namespace vigil {

StatusOr<bool> JobSeenOnHost(Db& db, std::string_view host, std::string_view job_id);

// OK when `host` has reported `job_id`; PermissionDenied saying so otherwise.
Status CheckJobOnHost(LedgerStore& store, const std::string& host, const std::string& job_id);

}  // namespace vigil
