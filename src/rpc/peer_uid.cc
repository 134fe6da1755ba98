// SPDX-License-Identifier: Apache-2.0
#include "rpc/peer_uid.h"

#include <netinet/in.h>

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr size_t kMaxTableBytes = 64 << 20;  // ~400k sockets.
constexpr std::string_view kTimeWait = "06";

// The kernel prints each 32-bit word of an address as the host-order integer it holds in memory
// ("%08X" of the __be32), and the port in host order ("%04X").
std::string Word(const unsigned char* bytes) {
  uint32_t word = 0;
  std::memcpy(&word, bytes, sizeof(word));
  return fmt::format("{:08X}", word);
}

struct Endpoint {
  bool v4 = false;              // An IPv4 address (or IPv4-mapped IPv6).
  unsigned char v4_bytes[4]{};  // When v4.
  unsigned char v6_bytes[16]{};
  int port = 0;
};

StatusOr<Endpoint> ToEndpoint(const sockaddr* addr) {
  Endpoint e;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    e.v4 = true;
    std::memcpy(e.v4_bytes, &in->sin_addr, 4);
    std::memset(e.v6_bytes + 10, 0xff, 2);
    std::memcpy(e.v6_bytes + 12, &in->sin_addr, 4);
    e.port = ntohs(in->sin_port);
    return e;
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    std::memcpy(e.v6_bytes, &in6->sin6_addr, 16);
    e.v4 = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr);
    if (e.v4) {
      std::memcpy(e.v4_bytes, e.v6_bytes + 12, 4);
    }
    e.port = ntohs(in6->sin6_port);
    return e;
  }
  return InvalidArgumentError("peer uid: not a TCP address");
}

std::string V4Text(const Endpoint& e) { return fmt::format("{}:{:04X}", Word(e.v4_bytes), e.port); }

std::string V6Text(const Endpoint& e) {
  std::string out;
  for (int i = 0; i < 16; i += 4) {
    out += Word(e.v6_bytes + i);
  }
  return fmt::format("{}:{:04X}", out, e.port);
}

}  // namespace

StatusOr<int> FindSocketOwnerInTable(std::string_view table, std::string_view local_text,
                                     std::string_view remote_text) {
  std::string_view line;
  NextLine(&table, &line);  // Header.
  bool closed = false;
  while (NextLine(&table, &line)) {
    const std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() < 10 || f[1] != local_text || f[2] != remote_text) {
      continue;
    }
    const std::optional<int64_t> uid = ParseInt64(f[7]);
    const std::optional<uint64_t> inode = ParseUint64(f[9]);
    if (!uid || *uid < 0 || !inode) {
      return InvalidArgumentError(fmt::format("peer uid: unreadable socket row: {}", line));
    }
    if (*inode == 0 || f[3] == kTimeWait) {
      closed = true;  // No socket behind the row any more: the kernel shows such rows as uid 0.
      continue;
    }
    return static_cast<int>(*uid);
  }
  if (closed) {
    return NotFoundError("peer uid: the client socket is closed");
  }
  return NotFoundError("peer uid: no socket row for " + std::string(local_text));
}

const StatusOr<std::string>& SocketTables::Table(const char* name) {
  std::optional<StatusOr<std::string>>& slot = std::string_view(name) == "net/tcp" ? tcp_ : tcp6_;
  if (!slot.has_value()) {
    slot = ReadSmallFile(JoinPath(proc_root_, name), kMaxTableBytes);
  }
  return *slot;
}

StatusOr<int> SocketTables::PeerUid(const sockaddr* local, const sockaddr* peer) {
  VIGIL_ASSIGN_OR_RETURN(Endpoint server, ToEndpoint(local));
  VIGIL_ASSIGN_OR_RETURN(Endpoint client, ToEndpoint(peer));
  // The client's socket may be IPv4 while ours is IPv6 (a dual-stack listener): look in both.
  struct Probe {
    const char* table;
    std::string client_text, server_text;
  };
  std::vector<Probe> probes;
  if (client.v4 && server.v4) {
    probes.push_back({"net/tcp", V4Text(client), V4Text(server)});
  }
  probes.push_back({"net/tcp6", V6Text(client), V6Text(server)});
  Status last = NotFoundError("peer uid: no socket table");
  for (const Probe& p : probes) {
    const StatusOr<std::string>& table = Table(p.table);
    if (!table.ok()) {
      last = table.status();
      continue;
    }
    StatusOr<int> uid = FindSocketOwnerInTable(*table, p.client_text, p.server_text);
    if (uid.ok() || uid.status().code() != StatusCode::kNotFound) {
      return uid;
    }
    last = uid.status();
  }
  return last;
}

StatusOr<int> LoopbackPeerUid(const std::string& proc_root, const sockaddr* local,
                              const sockaddr* peer) {
  return SocketTables(proc_root).PeerUid(local, peer);
}

}  // namespace vigil
