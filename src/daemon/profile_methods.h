// SPDX-License-Identifier: Apache-2.0
// Control-RPC method vigilProfile: samples the stacks of local processes for the caller (what
// `vigil profile --host H` sends; profile/profile_request.h has the request and reply). It acts
// on processes, so it is RpcAccess::kControl: a caller may sample only processes of its own uid
// unless privileged. It runs for the whole sampling duration, so it is RpcCost::kHeavy (a
// worker thread, never the event loop).
#pragma once

#include "rpc/dispatcher.h"

namespace vigil::daemon {

void RegisterProfileMethods(RpcDispatcher* dispatcher);

}  // namespace vigil::daemon
