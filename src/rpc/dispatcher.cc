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
//  - kControl needs the token or a caller whose uid the server established (SO_PEERCRED on the
//    unix socket, the socket tables for loopback TCP); handlers then limit unprivileged callers
//    to their own processes;
//  - kAdmin needs a privileged caller (root, the daemon's user, the token).
std::string AccessError(const CallerInfo& caller, RpcAccess access) {
  if (caller.authenticated || caller.transport == CallerInfo::Transport::kInProcess) {
    return "";
  }
  if (caller.transport == CallerInfo::Transport::kTcp && !caller.loopback) {
    return "unauthenticated: callers beyond loopback must send the daemon's token";
  }
  if (access == RpcAccess::kControl && caller.uid < 0) {
    return "permission denied: control calls need the daemon's token or a caller whose uid the "
           "daemon can establish";
  }
  if (access == RpcAccess::kAdmin && !CallerIsPrivileged(caller)) {
    return "permission denied: this call changes the whole daemon and needs root, the daemon's "
           "user or the daemon's token";
  }
  return "";
}

}  // namespace

bool CallerIsPrivileged(const CallerInfo& caller) {
  if (caller.authenticated || caller.transport == CallerInfo::Transport::kInProcess) {
    return true;
  }
  return caller.uid == 0 || (caller.uid > 0 && caller.uid == static_cast<int>(geteuid()));
}

bool CallerMayTouchUid(const CallerInfo& caller, int owner_uid) {
  return CallerIsPrivileged(caller) || (caller.uid >= 0 && caller.uid == owner_uid);
}

void RpcDispatcher::Register(const std::string& fn, RpcHandler handler, RpcAccess access,
                             RpcCost cost) {
  methods_[fn] = Method{std::move(handler), access, cost};
}

bool RpcDispatcher::IsHeavy(const nlohmann::json& request) const {
  auto fn = request.is_object() ? request.find("fn") : request.end();
  if (fn == request.end() || !fn->is_string()) {
    return false;
  }
  auto it = methods_.find(fn->get_ref<const std::string&>());
  return it != methods_.end() && it->second.cost == RpcCost::kHeavy;
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
