// SPDX-License-Identifier: Apache-2.0
#include "daemon/gpu_methods.h"

#include <algorithm>

#include "gpu/profiling_control.h"

namespace vigil::daemon {
namespace {

constexpr int64_t kDefaultPauseSeconds = 300;  // Dynolog's default.
constexpr int64_t kMaxPauseSeconds = 7 * 24 * 3600;

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
        if (auto it = request.find("duration_s"); it != request.end() && !it->is_null()) {
          if (!it->is_number_integer() ||
              (it->is_number_unsigned() && it->get<uint64_t>() > kMaxPauseSeconds)) {
            return nlohmann::json{{"status", false},
                                  {"error", "duration_s must be an integer number of seconds"}};
          }
          duration_s = std::min(it->get<int64_t>(), kMaxPauseSeconds);
        }
        nlohmann::json reply = Reply(PauseGpuProfiling(duration_s));
        reply["paused_for_s"] = GpuProfilingPauseRemainingSeconds();
        return reply;
      },
      RpcAccess::kAdmin);
  dispatcher->Register(
      "dcgmProfResume",
      [](const nlohmann::json&, const CallerInfo&) { return Reply(ResumeGpuProfiling()); },
      RpcAccess::kAdmin);
}

}  // namespace vigil::daemon
