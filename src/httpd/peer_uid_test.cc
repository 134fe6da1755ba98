// SPDX-License-Identifier: Apache-2.0
#include "httpd/peer_uid.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "httpd/http_attack.h"

namespace vigil {
namespace {

// A connection that does not exist: sock_diag answers "no such socket", not an owner.
TEST(PeerUidTest, NetlinkFindsNoOwnerForAConnectionThatDoesNotExist) {
  sockaddr_storage peer{}, local{};
  auto* p = reinterpret_cast<sockaddr_in*>(&peer);
  auto* l = reinterpret_cast<sockaddr_in*>(&local);
  p->sin_family = l->sin_family = AF_INET;
  p->sin_addr.s_addr = l->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  p->sin_port = htons(1);
  l->sin_port = htons(2);
  std::optional<std::optional<uid_t>> asked = NetlinkSocketUid(peer, local);
  if (!asked) GTEST_SKIP() << "sock_diag is not available here";
  EXPECT_EQ(*asked, std::nullopt);
  EXPECT_EQ(LoopbackPeerUid(peer, local), std::nullopt);
}

TEST(PeerUidTest, FindsTheRowOfAConnection) {
  const char table[] =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:2507 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 0 1\n"
      "   1: 0100007F:A1B2 0100007F:2507 01 00000000:00000000 00:00000000 00000000 65534 0 2\n";
  EXPECT_EQ(FindSocketUid(table, "0100007F:A1B2", "0100007F:2507"), 65534u);
  EXPECT_EQ(FindSocketUid(table, "0100007F:A1B3", "0100007F:2507"), std::nullopt);
}

// A real loopback connection from a child that became uid 65534 maps to 65534, ours to ours.
TEST(PeerUidTest, MapsLoopbackConnectionsToTheirOwner) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  auto accept_uid = [&]() -> std::optional<uid_t> {
    const int fd = ::accept(listener, nullptr, nullptr);
    sockaddr_storage peer{}, local{};
    socklen_t pl = sizeof(peer), ll = sizeof(local);
    getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl);
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll);
    EXPECT_TRUE(IsLoopbackAddress(peer));
    std::optional<uid_t> uid = LoopbackPeerUid(peer, local);
    // Both ways of asking name the same owner: sock_diag (where the kernel has it) and the table.
    if (std::optional<std::optional<uid_t>> asked = NetlinkSocketUid(peer, local)) {
      EXPECT_EQ(*asked, uid);
    }
    char peer_hex[32], local_hex[32];
    const auto* p4 = reinterpret_cast<const sockaddr_in*>(&peer);
    const auto* l4 = reinterpret_cast<const sockaddr_in*>(&local);
    snprintf(peer_hex, sizeof(peer_hex), "%08X:%04X", p4->sin_addr.s_addr, ntohs(p4->sin_port));
    snprintf(local_hex, sizeof(local_hex), "%08X:%04X", l4->sin_addr.s_addr, ntohs(l4->sin_port));
    std::string table;
    if (FILE* f = fopen("/proc/net/tcp", "r")) {
      char buf[4096];
      for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0;) table.append(buf, n);
      fclose(f);
      EXPECT_EQ(FindSocketUid(table, peer_hex, local_hex), uid);
    }
    ::close(fd);
    return uid;
  };
  const int mine = http_attack::Connect(port);
  ASSERT_GE(mine, 0);
  EXPECT_EQ(accept_uid(), geteuid());
  ::close(mine);
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  int stop = -1, ready = -1;
  const pid_t child = http_attack::StartDribblers(port, 1, 100, 65534, &stop, &ready);
  ASSERT_GT(child, 0);
  char c;
  ASSERT_EQ(::read(ready, &c, 1), 1);
  EXPECT_EQ(accept_uid(), 65534u);
  ::close(stop);
  ::close(ready);
  waitpid(child, nullptr, 0);
  ::close(listener);
}

}  // namespace
}  // namespace vigil
