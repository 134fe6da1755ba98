// SPDX-License-Identifier: Apache-2.0
// Socket plumbing shared by the RPC server and client: "host:port" parsing, loopback checks,
// listening (TCP and unix, with stale-socket replacement), connecting with a deadline, and a
// constant-time token comparison. Stateless functions; safe from any thread.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

struct HostPort {
  std::string host;  // Without brackets: "::1", "127.0.0.1", "node01".
  int port = 0;
};

// Parses "host:port", "[v6addr]:port" or, when default_port >= 0, a bare "host" / "[v6addr]".
StatusOr<HostPort> ParseHostPort(std::string_view text, int default_port = -1);

// True for 127.0.0.0/8, ::1 and IPv4-mapped ::ffff:127.x.y.z.
bool IsLoopbackAddress(const sockaddr* addr);
// "127.0.0.1:53122", "[::1]:1778".
std::string FormatSocketAddress(const sockaddr* addr);

struct TcpListener {
  ScopedFd fd;
  int port = 0;           // The bound port (the kernel's choice when asked for 0).
  bool loopback = false;  // Bound to a loopback address only.
};

// Resolves `host_port` (numeric or a name; empty host = all interfaces) and listens on the first
// address that binds. The socket is non-blocking and close-on-exec.
StatusOr<TcpListener> ListenTcp(const std::string& host_port, int backlog = 128);
// Reports whether `host_port`'s host resolves only to loopback addresses, without binding.
StatusOr<bool> IsLoopbackListenAddress(const std::string& host_port);

// Listens on a unix stream socket at `path` with permissions `mode`. An existing socket file
// nobody accepts on (left by a crashed daemon) is replaced; a live one is AlreadyExists; a
// non-socket file at the path is FailedPrecondition (we never delete what is not ours).
StatusOr<ScopedFd> ListenUnix(const std::string& path, int mode, int backlog = 128);

// Connects to "unix:/path" or "host:port" within timeout_ns. Unreachable daemons (refused, no
// such socket, no route) are Unavailable; a timeout is DeadlineExceeded. The fd is blocking.
StatusOr<ScopedFd> ConnectTo(const std::string& target, int64_t timeout_ns);

// Compares in time that depends only on the lengths, so a token cannot be guessed byte by byte.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace vigil
