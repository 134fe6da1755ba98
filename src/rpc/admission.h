// SPDX-License-Identifier: Apache-2.0
// What the RPC server lets each peer hold, so that no local user can starve another: connection
// slots in separate pools per transport, a per-peer share of each (a peer is a uid, or an address
// when the uid is unknown), a pool on the unix socket that only root and the daemon's user can
// use (so `vigil` as root always gets in), and a budget of buffered bytes across all
// connections with a per-peer share; beyond a small allowance per connection, a connection that
// would exceed it is not read until bytes are freed. Loop thread only; not thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "base/status.h"

namespace vigil {

struct AdmissionLimits {
  size_t max_tcp_connections = 256;
  size_t max_unix_connections = 256;
  size_t max_connections_per_peer = 32;         // Across both transports.
  size_t max_privileged_unix_connections = 32;  // Root and the daemon's user, on the unix socket.
  size_t max_buffered_bytes = 64 << 20;         // Request and reply bytes of all connections.
  size_t max_buffered_bytes_per_peer = 16 << 20;
  size_t free_buffer_bytes = 128 << 10;  // Any connection may hold this much regardless.
};

enum class ConnectionPool { kTcp, kUnix, kPrivilegedUnix };

class AdmissionBudget {
 public:
  explicit AdmissionBudget(AdmissionLimits limits) : limits_(limits) {}

  // Takes a connection slot for `peer`, or says why not (ResourceExhausted).
  Status Admit(ConnectionPool pool, const std::string& peer);
  void Leave(ConnectionPool pool, const std::string& peer);

  // A connection of `peer` now holds `after` bytes instead of `before`.
  void Recharge(const std::string& peer, size_t before, size_t after);
  // Whether a connection of `peer` that holds `held` bytes may read more.
  bool MayBuffer(const std::string& peer, size_t held) const;

  size_t buffered_bytes() const { return buffered_; }
  size_t connections(ConnectionPool pool) const { return open_[static_cast<int>(pool)]; }

 private:
  struct Peer {
    size_t connections = 0;
    size_t bytes = 0;
  };
  size_t Limit(ConnectionPool pool) const;

  AdmissionLimits limits_;
  size_t open_[3] = {0, 0, 0};
  size_t buffered_ = 0;
  std::map<std::string, Peer> peers_;
};

}  // namespace vigil
