// SPDX-License-Identifier: Apache-2.0
// The uid behind a loopback TCP connection, asked of sock_diag (or read from /proc/net/tcp{,6} as
// identd does where sock_diag is unavailable): the client's end of a loopback connection is a
// socket of this host, listed with its owner. The HTTP servers key their per-client connection
// limits on it, since every local user connects from 127.0.0.1. Owner: httpd. Stateless;
// thread-safe.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// The owner of the socket whose local end is `peer` and remote end is `local` (an accepted
// connection's two addresses), or nullopt when the tables do not list it (not loopback, gone).
std::optional<uid_t> LoopbackPeerUid(const sockaddr_storage& peer, const sockaddr_storage& local);

// The owner of that socket asked of the kernel's sock_diag netlink interface: an exact lookup,
// cheap however many sockets the host has. nullopt when it could not be asked (no sock_diag, not
// TCP over IPv4/IPv6), an empty answer when the kernel has no such socket. Exposed for tests.
std::optional<std::optional<uid_t>> NetlinkSocketUid(const sockaddr_storage& peer,
                                                     const sockaddr_storage& local);

// The uid column of the /proc/net/tcp table `table` for the row local_hex -> remote_hex
// ("0100007F:1F90" form); exposed for tests.
std::optional<uid_t> FindSocketUid(std::string_view table, const std::string& local_hex,
                                   const std::string& remote_hex);

// True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104.
bool IsLoopbackAddress(const sockaddr_storage& addr);

}  // namespace vigil
