// SPDX-License-Identifier: Apache-2.0
#include "rpc/peer_uid.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "rpc/net_util.h"

namespace vigil {
namespace {

constexpr int kNobody = 65534;

sockaddr_in V4(const char* ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

sockaddr_in6 V6(const char* ip, int port) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET6, ip, &a.sin6_addr);
  return a;
}

const sockaddr* Sa(const void* a) { return reinterpret_cast<const sockaddr*>(a); }

constexpr char kHeader[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode\n";

class PeerUidFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/vgl-peer-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
    ASSERT_TRUE(MakeDirs(root_ + "/net").ok());
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Table(const std::string& name, const std::string& rows) {
    ASSERT_TRUE(WriteFileAtomic(root_ + "/net/" + name, kHeader + rows).ok());
  }
  std::string root_;
};

// 127.0.0.1:1778 is the server (0x06F2), 127.0.0.1:53122 the client (0xCF82).
TEST_F(PeerUidFixtureTest, TheClientsRowNamesItsOwnerNotTheServers) {
  Table(
      "tcp",
      "   0: 0100007F:06F2 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 0 1001 1\n"
      "   1: 0100007F:06F2 0100007F:CF82 01 00000000:00000000 00:00000000 00000000     0 0 1002 1\n"
      "   2: 0100007F:CF82 0100007F:06F2 01 00000000:00000000 00:00000000 00000000  1007 0 1003 "
      "1\n");
  Table("tcp6", "");
  const sockaddr_in server = V4("127.0.0.1", 1778), client = V4("127.0.0.1", 53122);
  EXPECT_EQ(LoopbackPeerUid(root_, Sa(&server), Sa(&client)).value_or(-1), 1007);
  // Another client port has no row.
  const sockaddr_in other = V4("127.0.0.1", 53123);
  EXPECT_EQ(LoopbackPeerUid(root_, Sa(&server), Sa(&other)).status().code(), StatusCode::kNotFound);
}

TEST_F(PeerUidFixtureTest, OrphanedAndTimeWaitRowsAreNeverTakenForRoot) {
  // The kernel prints uid 0 for a socket whose owner closed it (inode 0) and for TIME_WAIT.
  Table(
      "tcp",
      "   0: 0100007F:CF82 0100007F:06F2 04 00000000:00000000 00:00000000 00000000     0 0 0 1\n"
      "   1: 0100007F:CF83 0100007F:06F2 06 00000000:00000000 00:00000000 00000000     0 0 0 3\n");
  Table("tcp6", "");
  const sockaddr_in server = V4("127.0.0.1", 1778);
  for (int port : {53122, 53123}) {
    const sockaddr_in client = V4("127.0.0.1", port);
    StatusOr<int> uid = LoopbackPeerUid(root_, Sa(&server), Sa(&client));
    EXPECT_EQ(uid.status().code(), StatusCode::kNotFound) << port;
  }
}

TEST_F(PeerUidFixtureTest, Ipv6AndIpv4MappedClients) {
  Table("tcp", "");
  Table("tcp6",
        "   0: 00000000000000000000000001000000:CF82 00000000000000000000000001000000:06F2 01 "
        "00000000:00000000 00:00000000 00000000  1008 0 2001 1\n"
        "   1: 0000000000000000FFFF00000100007F:CF84 0000000000000000FFFF00000100007F:06F2 01 "
        "00000000:00000000 00:00000000 00000000  1009 0 2002 1\n");
  const sockaddr_in6 server = V6("::1", 1778), client = V6("::1", 53122);
  EXPECT_EQ(LoopbackPeerUid(root_, Sa(&server), Sa(&client)).value_or(-1), 1008);
  const sockaddr_in6 mapped_server = V6("::ffff:127.0.0.1", 1778);
  const sockaddr_in6 mapped_client = V6("::ffff:127.0.0.1", 53124);
  EXPECT_EQ(LoopbackPeerUid(root_, Sa(&mapped_server), Sa(&mapped_client)).value_or(-1), 1009);
}

TEST_F(PeerUidFixtureTest, MissingTablesAndGarbageAreErrorsNotRoot) {
  const sockaddr_in server = V4("127.0.0.1", 1778), client = V4("127.0.0.1", 53122);
  EXPECT_FALSE(LoopbackPeerUid(root_, Sa(&server), Sa(&client)).ok());
  Table("tcp", "   0: 0100007F:CF82 0100007F:06F2 01 x y z nonsense 0 inode?\n");
  EXPECT_FALSE(LoopbackPeerUid(root_, Sa(&server), Sa(&client)).ok());
}

// Over real loopback: a child that switched to uid 65534 connects; the daemon side finds 65534,
// and once the child has exited (its socket orphaned) the lookup fails instead of saying 0.
TEST(PeerUidTest, FindsTheUidOfARealUnprivilegedLoopbackClient) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to switch a child to uid 65534";
  }
  StatusOr<TcpListener> listener = ListenTcp("127.0.0.1:0");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  const sockaddr_in server = V4("127.0.0.1", listener->port);
  int hold[2];
  ASSERT_EQ(pipe(hold), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe calls here: the test process has threads.
    close(hold[1]);
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) {
      _exit(2);
    }
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, Sa(&server), sizeof(server)) != 0) {
      _exit(3);
    }
    char c;
    [[maybe_unused]] ssize_t n = read(hold[0], &c, 1);  // Until the parent closes the pipe.
    _exit(0);
  }
  close(hold[0]);
  ScopedFd accepted;
  ASSERT_TRUE(WaitFor(
      [&] {
        accepted = ScopedFd(accept4(listener->fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
        return accepted.valid();
      },
      10));
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  ASSERT_EQ(getsockname(accepted.get(), reinterpret_cast<sockaddr*>(&local), &local_len), 0);
  ASSERT_EQ(getpeername(accepted.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len), 0);
  StatusOr<int> uid = LoopbackPeerUid("/proc", Sa(&local), Sa(&peer));
  ASSERT_TRUE(uid.ok()) << uid.status().ToString();
  EXPECT_EQ(*uid, kNobody);

  close(hold[1]);  // The child exits; its socket is closed and orphaned.
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  StatusOr<int> after = LoopbackPeerUid("/proc", Sa(&local), Sa(&peer));
  EXPECT_FALSE(after.ok() && *after == 0) << "a closed client socket was taken for root's";
}

}  // namespace
}  // namespace vigil
