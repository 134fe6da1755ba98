// SPDX-License-Identifier: Apache-2.0
// Who is on the other end of a loopback TCP connection: the kernel's socket tables
// (<proc>/net/tcp and <proc>/net/tcp6) list every socket of the network namespace with the uid
// that created it, so the row whose local address and port are the client's side of our
// connection names its owner, as identd does. Orphaned sockets (inode 0: the client closed
// before we looked) and TIME_WAIT rows are reported with uid 0 by the kernel and are therefore
// never trusted. Stateless functions; safe from any thread.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace vigil {

// The socket tables of one moment, read at most once each (reading them costs the kernel a walk
// of every socket, so a batch of new connections shares one read). Not thread-safe.
class SocketTables {
 public:
  explicit SocketTables(std::string proc_root) : proc_root_(std::move(proc_root)) {}
  // The uid owning the client socket of the connection whose server side is `local` and whose
  // client side is `peer` (both AF_INET or AF_INET6, IPv4-mapped addresses included). NotFound
  // when no live row matches (the client closed, or it lives in another network namespace).
  StatusOr<int> PeerUid(const sockaddr* local, const sockaddr* peer);

 private:
  const StatusOr<std::string>& Table(const char* name);

  std::string proc_root_;
  std::optional<StatusOr<std::string>> tcp_, tcp6_;
};

// One lookup with fresh tables.
StatusOr<int> LoopbackPeerUid(const std::string& proc_root, const sockaddr* local,
                              const sockaddr* peer);

// Searches one table's text for the row with local address `local_text` and remote address
// `remote_text`, both as the kernel prints them ("0100007F:06F2"). Exposed for tests.
StatusOr<int> FindSocketOwnerInTable(std::string_view table, std::string_view local_text,
                                     std::string_view remote_text);

}  // namespace vigil
