// SPDX-License-Identifier: Apache-2.0
// Control-RPC method vigilProfile: samples the stacks of local processes for the caller (what
// `vigil profile --host H` sends; profile/profile_request.h has the request and reply). It acts
// on processes, so it is RpcAccess::kControl: a caller may sample only processes of its own uid
// unless privileged. It runs for the whole sampling duration, so it is RpcCost::kHeavy (a
// worker thread, never the event loop). A job_id is resolved to the job's processes here.
#pragma once

#include "profile/profile_request.h"
#include "rpc/dispatcher.h"

namespace vigil::daemon {

// `pids_of_job` resolves a request's job_id (the processes holding GPUs or registered over the
// IPC fabric with that job); null: a job_id is refused.
void RegisterProfileMethods(RpcDispatcher* dispatcher, PidsOfJob pids_of_job = nullptr);

}  // namespace vigil::daemon
