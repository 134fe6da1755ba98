// SPDX-License-Identifier: Apache-2.0
// Control-RPC methods for GPU profiling: Dynolog's dcgmProfPause {"duration_s": N} and
// dcgmProfResume, answered as Dynolog does ({"status": true|false}), so `dyno dcgm-pause` and
// `vigil gpu pause|resume` let users run Nsight without stopping the daemon. Both change what
// the daemon collects for every user, so they are RpcAccess::kAdmin (root, the daemon's user or
// the token).
#pragma once

#include "rpc/dispatcher.h"

namespace vigil::daemon {

void RegisterGpuMethods(RpcDispatcher* dispatcher);

}  // namespace vigil::daemon
