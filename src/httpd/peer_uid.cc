// SPDX-License-Identifier: Apache-2.0
#include "httpd/peer_uid.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

// The kernel prints each 32-bit word of an address as stored (%08X of the raw word) and the port
// in host order.
std::string Hex(const sockaddr_storage& addr) {
  char buf[64] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    std::snprintf(buf, sizeof(buf), "%08X:%04X", in->sin_addr.s_addr, ntohs(in->sin_port));
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    uint32_t w[4];
    std::memcpy(w, &in6->sin6_addr, sizeof(w));
    std::snprintf(buf, sizeof(buf), "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
                  ntohs(in6->sin6_port));
  }
  return buf;
}

// Copies the address and port of `addr` into a sock_diag socket id (both in network order).
void FillEnd(const sockaddr_storage& addr, __be16* port, __be32 words[4]) {
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    *port = in->sin_port;
    std::memcpy(words, &in->sin_addr, sizeof(in->sin_addr));
  } else {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    *port = in6->sin6_port;
    std::memcpy(words, &in6->sin6_addr, sizeof(in6->sin6_addr));
  }
}

}  // namespace

std::optional<std::optional<uid_t>> NetlinkSocketUid(const sockaddr_storage& peer,
                                                     const sockaddr_storage& local) {
  if (peer.ss_family != local.ss_family ||
      (peer.ss_family != AF_INET && peer.ss_family != AF_INET6)) {
    return std::nullopt;
  }
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return std::nullopt;
  const timeval deadline{1, 0};  // The kernel answers at once; never wait longer than this.
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline));
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof(message);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;  // One socket by its exact id, not a dump.
  message.header.nlmsg_seq = 1;
  message.request.sdiag_family = static_cast<uint8_t>(peer.ss_family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0u;
  // The client's socket: its source is the accepted connection's peer, its destination us.
  FillEnd(peer, &message.request.id.idiag_sport, message.request.id.idiag_src);
  FillEnd(local, &message.request.id.idiag_dport, message.request.id.idiag_dst);
  message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  std::optional<std::optional<uid_t>> answer;
  if (::sendto(fd, &message, sizeof(message), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof(kernel)) == static_cast<ssize_t>(sizeof(message))) {
    alignas(nlmsghdr) char reply[1024];
    const ssize_t n = ::recv(fd, reply, sizeof(reply), 0);
    const auto* h = reinterpret_cast<const nlmsghdr*>(reply);
    if (n >= static_cast<ssize_t>(sizeof(nlmsghdr)) && NLMSG_OK(h, static_cast<size_t>(n))) {
      if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
          h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        answer =
            static_cast<uid_t>(reinterpret_cast<const inet_diag_msg*>(NLMSG_DATA(h))->idiag_uid);
      } else if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr)) &&
                 reinterpret_cast<const nlmsgerr*>(NLMSG_DATA(h))->error == -ENOENT) {
        answer = std::optional<uid_t>();  // Asked and answered: no such socket (gone already).
      }
    }
  }
  ::close(fd);
  return answer;
}

bool IsLoopbackAddress(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
  }
  return false;
}

std::optional<uid_t> FindSocketUid(std::string_view table, const std::string& local_hex,
                                   const std::string& remote_hex) {
  std::string_view rest = table, line;
  NextLine(&rest, &line);  // Column titles.
  while (NextLine(&rest, &line)) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
    const std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() < 8 || f[1] != local_hex || f[2] != remote_hex) continue;
    const std::optional<uint64_t> uid = ParseUint64(f[7]);
    if (uid) return static_cast<uid_t>(*uid);
  }
  return std::nullopt;
}

std::optional<uid_t> LoopbackPeerUid(const sockaddr_storage& peer, const sockaddr_storage& local) {
  if (!IsLoopbackAddress(peer)) return std::nullopt;
  // sock_diag finds the one socket by its addresses; /proc/net/tcp lists every socket of the
  // host (and the kernel walks its whole hash table to print it), so it is only the fallback
  // where sock_diag is missing or refused.
  if (std::optional<std::optional<uid_t>> uid = NetlinkSocketUid(peer, local)) return *uid;
  const std::string peer_hex = Hex(peer), local_hex = Hex(local);
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    if ((peer.ss_family == AF_INET) != (std::strcmp(path, "/proc/net/tcp") == 0)) continue;
    // 150 bytes a socket: 64 MiB covers ~400k sockets.
    StatusOr<std::string> table = ReadSmallFile(path, 64 << 20);
    if (!table.ok()) continue;
    if (std::optional<uid_t> uid = FindSocketUid(*table, peer_hex, local_hex)) return uid;
  }
  return std::nullopt;
}

}  // namespace vigil
