// SPDX-License-Identifier: Apache-2.0
#include "daemon/gpu_methods.h"

#include "gpu/profiling_control.h"

namespace vigil::daemon {
namespace {

constexpr int64_t kDefaultPauseSeconds = 300;  // Dynolog's default.

nlohmann::json Reply(const Status& s) {
  nlohmann::json reply{{"status", s.ok()}};
  if (!s.ok()) {
    reply["error"] = s.ToString();
  }
  return reply;
}

}  // namespace

void RegisterGpuMethods(RpcDispatcher* dispatcher) {
  dispatcher->Register(
      "dcgmProfPause",
      [](const nlohmann::json& request, const CallerInfo&) {
        int64_t duration_s = kDefaultPauseSeconds;
        if (auto it = request.find("duration_s"); it != request.end() && it->is_number()) {
          duration_s = it->get<int64_t>();
        }
        nlohmann::json reply = Reply(PauseGpuProfiling(duration_s));
        reply["paused_for_s"] = GpuProfilingPauseRemainingSeconds();
        return reply;
      },
      RpcAccess::kControl);
  dispatcher->Register(
      "dcgmProfResume",
      [](const nlohmann::json&, const CallerInfo&) { return Reply(ResumeGpuProfiling()); },
      RpcAccess::kControl);
}

}  // namespace vigil::daemon
