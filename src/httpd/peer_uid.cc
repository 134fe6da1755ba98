// SPDX-License-Identifier: Apache-2.0
#include "httpd/peer_uid.h"

#include <arpa/inet.h>
#include <netinet/in.h>

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

}  // namespace

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
