// SPDX-License-Identifier: Apache-2.0
#include "rpc/dispatcher.h"

#include <unistd.h>

#include <exception>
#include <utility>

namespace vigil {
namespace {

nlohmann::json ErrorReply(const std::string& message) { return nlohmann::json{{"error", message}}; }

// Who may call what (docs/protocols.md, "Control RPC", "Authentication"):
//  - a TCP caller from beyond loopback must have presented the token, for every method;
//  - loopback TCP is trusted like Dynolog trusts it (Dynolog-compatible calls stay tokenless);
//  - kControl on the unix socket needs root or the daemon's own uid (or the token).
std::string AccessError(const CallerInfo& caller, RpcAccess access) {
  if (caller.authenticated || caller.transport == CallerInfo::Transport::kInProcess) {
    return "";
  }
  if (caller.transport == CallerInfo::Transport::kTcp && !caller.loopback) {
    return "unauthenticated: callers beyond loopback must send the daemon's token";
  }
  if (access == RpcAccess::kControl && caller.transport == CallerInfo::Transport::kUnix) {
    const int own_uid = static_cast<int>(geteuid());
    if (caller.uid != 0 && caller.uid != own_uid) {
      return "permission denied: control calls on the unix socket need root or the daemon's user";
    }
  }
  return "";
}

}  // namespace

void RpcDispatcher::Register(const std::string& fn, RpcHandler handler, RpcAccess access) {
  methods_[fn] = Method{std::move(handler), access};
}

nlohmann::json RpcDispatcher::Dispatch(const nlohmann::json& request,
                                       const CallerInfo& caller) const {
  if (!request.is_object()) {
    return ErrorReply("request must be a JSON object");
  }
  auto fn = request.find("fn");
  if (fn == request.end() || !fn->is_string()) {
    return ErrorReply("request must have a string field \"fn\"");
  }
  const std::string& name = fn->get_ref<const std::string&>();
  auto it = methods_.find(name);
  if (it == methods_.end()) {
    return ErrorReply("unknown method: " + name);
  }
  if (std::string denied = AccessError(caller, it->second.access); !denied.empty()) {
    return ErrorReply(name + ": " + denied);
  }
  try {
    nlohmann::json reply = it->second.handler(request, caller);
    if (reply.is_null()) {
      return nlohmann::json::object();
    }
    return reply;
  } catch (const std::exception& e) {
    return ErrorReply(name + ": internal error: " + e.what());
  } catch (...) {
    return ErrorReply(name + ": internal error");
  }
}

std::vector<std::string> RpcDispatcher::Methods() const {
  std::vector<std::string> names;
  names.reserve(methods_.size());
  for (const auto& [name, method] : methods_) {
    names.push_back(name);
  }
  return names;
}

}  // namespace vigil
