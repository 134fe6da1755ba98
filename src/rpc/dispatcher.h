// SPDX-License-Identifier: Apache-2.0
// Control-RPC method table. Modules register handlers by Dynolog-style method name ("fn" in the
// request JSON); the RPC server calls Dispatch() for each decoded request. The table knows who is
// calling (transport, peer credentials, token) so a handler or the table itself can refuse.
// Register() before the server starts; Dispatch() is then safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vigil {

struct CallerInfo {
  enum class Transport { kTcp, kUnix, kInProcess };
  Transport transport = Transport::kInProcess;
  bool loopback = true;        // TCP peer on 127.0.0.0/8 or ::1; always true for unix.
  bool authenticated = false;  // Presented the right token.
  int pid = -1;                // From SO_PEERCRED on the unix socket; -1 otherwise.
  int uid = -1;  // SO_PEERCRED (unix) or the socket tables (loopback TCP); -1 when unknown.
  int gid = -1;
  std::string peer;  // "127.0.0.1:53122" or "unix:pid=123,uid=0".
};

// Root, the daemon's own user, a token holder or the daemon itself: may act on every process and
// see every user's sessions, pids and paths.
bool CallerIsPrivileged(const CallerInfo& caller);
// Whether the caller may act on, or see, something owned by `owner_uid` (-1: unknown owner, which
// only privileged callers may touch).
bool CallerMayTouchUid(const CallerInfo& caller, int owner_uid);

enum class RpcAccess {
  kRead,     // Any caller the server accepted; replies show other users' data only when privileged.
  kControl,  // Acts on processes (traces): the token, or a caller whose uid is known, who is then
             // limited to that uid's own processes unless privileged.
  kAdmin,    // Changes the whole daemon (profiling pause): privileged callers only.
};

enum class RpcCost {
  kCheap,  // Answered on the server's event loop.
  kHeavy,  // Work grows with the data (queries, /proc walks): run on the server's worker threads.
};

using RpcHandler =
    std::function<nlohmann::json(const nlohmann::json& request, const CallerInfo& caller)>;

class RpcDispatcher {
 public:
  void Register(const std::string& fn, RpcHandler handler, RpcAccess access = RpcAccess::kRead,
                RpcCost cost = RpcCost::kCheap);
  // Runs the handler named by request["fn"]. Unknown methods, missing "fn", refused access and
  // handler exceptions all come back as {"error": "..."} replies, never as a throw.
  nlohmann::json Dispatch(const nlohmann::json& request, const CallerInfo& caller) const;
  // True when request["fn"] names a kHeavy method.
  bool IsHeavy(const nlohmann::json& request) const;
  std::vector<std::string> Methods() const;

 private:
  struct Method {
    RpcHandler handler;
    RpcAccess access = RpcAccess::kRead;
    RpcCost cost = RpcCost::kCheap;
  };
  std::map<std::string, Method> methods_;
};

}  // namespace vigil
