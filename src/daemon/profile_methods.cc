// SPDX-License-Identifier: Apache-2.0
#include "daemon/profile_methods.h"

#include <fmt/format.h>

#include "profile/profile_request.h"

namespace vigil::daemon {

void RegisterProfileMethods(RpcDispatcher* dispatcher, PidsOfJob pids_of_job) {
  dispatcher->Register(
      kProfileMethod,
      [pids_of_job](const nlohmann::json& request, const CallerInfo& caller) {
        return RunProfileRequest(
            request,
            [&caller](int pid) -> Status {
              StatusOr<int> uid = ProcessOwnerUid(pid);
              if (!uid.ok()) {
                return NotFoundError(fmt::format("no such process: {}", pid));
              }
              if (!CallerMayTouchUid(caller, *uid)) {
                return PermissionDeniedError(
                    fmt::format("pid {} belongs to another user (uid {})", pid, *uid));
              }
              return OkStatus();
            },
            pids_of_job);
      },
      RpcAccess::kControl, RpcCost::kHeavy);
}

}  // namespace vigil::daemon
