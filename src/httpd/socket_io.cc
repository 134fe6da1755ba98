// SPDX-License-Identifier: Apache-2.0
#include "httpd/socket_io.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "base/time_util.h"

namespace vigil {

bool WaitFd(int fd, short events, int64_t deadline_ns) {
  while (true) {
    const int64_t left_ms = (deadline_ns - MonotonicNanos()) / kNanosPerMilli;
    if (left_ms <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}

bool SendAll(int fd, std::string_view data, int64_t deadline_ns) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return false;
    if (!WaitFd(fd, POLLOUT, deadline_ns)) return false;
  }
  return true;
}

std::string AddressText(const sockaddr_storage& addr, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  int p = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    p = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    p = ntohs(in6->sin6_port);
  }
  if (port != nullptr) *port = p;
  return text;
}

}  // namespace vigil
