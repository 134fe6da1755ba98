// SPDX-License-Identifier: Apache-2.0
#include "rpc/net_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

StatusOr<AddrInfoPtr> Resolve(const HostPort& hp, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : AI_ADDRCONFIG;
  const std::string port = std::to_string(hp.port);
  addrinfo* result = nullptr;
  const int rc =
      getaddrinfo(hp.host.empty() ? nullptr : hp.host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    return UnavailableError(fmt::format("resolve {}:{}: {}", hp.host, hp.port, gai_strerror(rc)));
  }
  return AddrInfoPtr(result);
}

Status FillUnixAddress(const std::string& path, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr->sun_path)) {
    return InvalidArgumentError(
        fmt::format("unix socket path must be 1..{} bytes: {}", sizeof(addr->sun_path) - 1, path));
  }
  std::memcpy(addr->sun_path, path.data(), path.size());
  return OkStatus();
}

// Waits for a non-blocking connect() to finish; returns the connect error (0 on success).
Status FinishConnect(int fd, int64_t deadline_mono_ns, const std::string& what) {
  for (;;) {
    const int64_t left_ns = deadline_mono_ns - MonotonicNanos();
    if (left_ns <= 0) {
      return DeadlineExceededError("connect " + what + ": timed out");
    }
    pollfd pfd{fd, POLLOUT, 0};
    const int rc = poll(&pfd, 1, static_cast<int>((left_ns + kNanosPerMilli - 1) / kNanosPerMilli));
    if (rc < 0 && errno == EINTR) {
      continue;
    }
    if (rc < 0) {
      return ErrnoStatus(errno, "poll " + what);
    }
    if (rc == 0) {
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
      return ErrnoStatus(errno, "connect " + what);
    }
    if (err != 0) {
      return UnavailableError(fmt::format("connect {}: {}", what, strerrordesc_np(err)));
    }
    return OkStatus();
  }
}

StatusOr<ScopedFd> ConnectAddress(const sockaddr* addr, socklen_t len, int64_t deadline_mono_ns,
                                  const std::string& what) {
  ScopedFd fd(socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "socket");
  }
  if (connect(fd.get(), addr, len) < 0) {
    const int err = errno;
    if (err == EINPROGRESS || err == EAGAIN) {
      VIGIL_RETURN_IF_ERROR(FinishConnect(fd.get(), deadline_mono_ns, what));
    } else if (err == ENOENT || err == ECONNREFUSED || err == ENETUNREACH || err == EHOSTUNREACH ||
               err == ENOTDIR || err == EACCES) {
      return UnavailableError(fmt::format("connect {}: {}", what, strerrordesc_np(err)));
    } else {
      return ErrnoStatus(err, "connect " + what);
    }
  }
  const int flags = fcntl(fd.get(), F_GETFL);
  if (flags < 0 || fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) < 0) {
    return ErrnoStatus(errno, "fcntl " + what);
  }
  return fd;
}

}  // namespace

StatusOr<HostPort> ParseHostPort(std::string_view text, int default_port) {
  HostPort out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgumentError(fmt::format("bad address (missing ']'): {}", text));
    }
    out.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return InvalidArgumentError(fmt::format("bad address: {}", text));
      }
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon) {
      // Several colons without brackets: a bare IPv6 address.
      out.host = std::string(text);
    } else if (colon != std::string_view::npos) {
      out.host = std::string(text.substr(0, colon));
      port_text = text.substr(colon + 1);
    } else {
      out.host = std::string(text);
    }
  }
  if (port_text.empty()) {
    if (default_port < 0) {
      return InvalidArgumentError(fmt::format("address needs a port (host:port): {}", text));
    }
    out.port = default_port;
    return out;
  }
  std::optional<int64_t> port = ParseInt64(port_text);
  if (!port || *port < 0 || *port > 65535) {
    return InvalidArgumentError(fmt::format("bad port in address: {}", text));
  }
  out.port = static_cast<int>(*port);
  return out;
}

bool IsLoopbackAddress(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
      return true;
    }
    return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
  }
  return addr->sa_family == AF_UNIX;
}

std::string FormatSocketAddress(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    return fmt::format("{}:{}", text, ntohs(in->sin_port));
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    return fmt::format("[{}]:{}", text, ntohs(in6->sin6_port));
  }
  return "unix";
}

StatusOr<bool> IsLoopbackListenAddress(const std::string& host_port) {
  VIGIL_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(host_port));
  if (hp.host.empty()) {
    return false;  // All interfaces.
  }
  VIGIL_ASSIGN_OR_RETURN(AddrInfoPtr info, Resolve(hp, /*passive=*/true));
  for (const addrinfo* ai = info.get(); ai != nullptr; ai = ai->ai_next) {
    if (!IsLoopbackAddress(ai->ai_addr)) {
      return false;
    }
  }
  return true;
}

StatusOr<TcpListener> ListenTcp(const std::string& host_port, int backlog) {
  VIGIL_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(host_port));
  VIGIL_ASSIGN_OR_RETURN(AddrInfoPtr info, Resolve(hp, /*passive=*/true));
  Status last = UnavailableError("listen " + host_port + ": no usable address");
  for (const addrinfo* ai = info.get(); ai != nullptr; ai = ai->ai_next) {
    ScopedFd fd(socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      last = ErrnoStatus(errno, "socket for " + host_port);
      continue;
    }
    const int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) < 0) {
      last = ErrnoStatus(errno, "bind " + host_port);
      continue;
    }
    if (listen(fd.get(), backlog) < 0) {
      last = ErrnoStatus(errno, "listen " + host_port);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) < 0) {
      return ErrnoStatus(errno, "getsockname " + host_port);
    }
    TcpListener out;
    out.loopback = IsLoopbackAddress(reinterpret_cast<sockaddr*>(&bound));
    out.port = bound.ss_family == AF_INET6
                   ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                   : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    out.fd = std::move(fd);
    return out;
  }
  return last;
}

StatusOr<ScopedFd> ListenUnix(const std::string& path, int mode, int backlog) {
  sockaddr_un addr;
  VIGIL_RETURN_IF_ERROR(FillUnixAddress(path, &addr));
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return FailedPreconditionError("listen unix:" + path + ": path exists and is not a socket");
    }
    ScopedFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!probe.valid()) {
      return ErrnoStatus(errno, "socket");
    }
    if (connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 ||
        errno == EAGAIN) {
      return AlreadyExistsError("listen unix:" + path + ": another daemon is serving this socket");
    }
    if (unlink(path.c_str()) < 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "remove stale socket " + path);
    }
  }
  ScopedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "socket");
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
    return ErrnoStatus(errno, "bind unix:" + path);
  }
  // Tighten permissions before listen(): no connection can be accepted before this point.
  if (chmod(path.c_str(), static_cast<mode_t>(mode)) < 0) {
    const int err = errno;
    unlink(path.c_str());
    return ErrnoStatus(err, "chmod " + path);
  }
  if (listen(fd.get(), backlog) < 0) {
    const int err = errno;
    unlink(path.c_str());
    return ErrnoStatus(err, "listen unix:" + path);
  }
  return fd;
}

StatusOr<ScopedFd> ConnectTo(const std::string& target, int64_t timeout_ns) {
  const int64_t deadline = MonotonicNanos() + timeout_ns;
  if (target.rfind("unix:", 0) == 0) {
    const std::string path = target.substr(5);
    sockaddr_un addr;
    VIGIL_RETURN_IF_ERROR(FillUnixAddress(path, &addr));
    return ConnectAddress(reinterpret_cast<sockaddr*>(&addr), sizeof(addr), deadline, target);
  }
  VIGIL_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(target));
  VIGIL_ASSIGN_OR_RETURN(AddrInfoPtr info, Resolve(hp, /*passive=*/false));
  Status last = UnavailableError("connect " + target + ": no address");
  for (const addrinfo* ai = info.get(); ai != nullptr; ai = ai->ai_next) {
    StatusOr<ScopedFd> fd = ConnectAddress(ai->ai_addr, ai->ai_addrlen, deadline, target);
    if (fd.ok()) {
      return fd;
    }
    last = fd.status();
    if (last.code() == StatusCode::kDeadlineExceeded) {
      break;
    }
  }
  return last;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace vigil
