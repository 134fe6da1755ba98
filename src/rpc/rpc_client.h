// SPDX-License-Identifier: Apache-2.0
// Client side of the control RPC (docs/protocols.md, "Control RPC"): connects to a daemon over
// TCP or its unix socket and makes framed JSON calls. One connection, calls in sequence; the
// server closes idle connections after its read deadline, so long-lived users reconnect per call
// or on error. Durations are relative nanoseconds. Movable, not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

inline constexpr int kDefaultRpcPort = 1778;
inline constexpr size_t kMaxReplyBytes = 256 << 20;  // Range queries can be large.

// Where vigild puts its unix socket by default, and where `vigil` looks for it: as root
// /run/vigil/vigild.sock, otherwise $XDG_RUNTIME_DIR/vigil/vigild.sock, or
// /tmp/vigil-<uid>/vigild.sock when XDG_RUNTIME_DIR is unset or not an existing absolute directory.
std::string DefaultDaemonSocketPath();

class RpcClient {
 public:
  // `target` is "unix:/path/to/sock", "host:port" or "[v6addr]:port". Unreachable daemons
  // (refused, no socket file, no route) are Unavailable; running out of time is
  // DeadlineExceeded. deadline_ns bounds the connect, from now.
  static StatusOr<RpcClient> Connect(const std::string& target, int64_t deadline_ns);

  // Sends `request` and waits up to deadline_ns (from now) for the reply. The reply comes back as
  // the server sent it, {"error": ...} replies included; transport failures, a reply that is not
  // JSON or a connection closed without a reply are errors.
  StatusOr<nlohmann::json> Call(const nlohmann::json& request, int64_t deadline_ns);

  const std::string& target() const { return target_; }

 private:
  RpcClient(std::string target, ScopedFd fd) : target_(std::move(target)), fd_(std::move(fd)) {}

  std::string target_;
  ScopedFd fd_;
};

}  // namespace vigil
