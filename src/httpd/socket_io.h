// SPDX-License-Identifier: Apache-2.0
// Small blocking-with-deadline socket helpers shared by the HTTP servers: waiting for a
// non-blocking socket, sending a whole buffer by a deadline, and a socket address as text.
// Owner: httpd. Stateless; thread-safe.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil {

// Waits until `events` are ready on `fd` or MonotonicNanos() reaches `deadline_ns`; false on
// timeout or error (EINTR is retried).
bool WaitFd(int fd, short events, int64_t deadline_ns);

// Sends all of `data` on non-blocking `fd` by `deadline_ns`; false when the peer goes away or the
// deadline passes first.
bool SendAll(int fd, std::string_view data, int64_t deadline_ns);

// "127.0.0.1" / "::1" and the port of an IPv4 or IPv6 address; "" and 0 for another family.
std::string AddressText(const sockaddr_storage& addr, int* port = nullptr);

}  // namespace vigil
