// SPDX-License-Identifier: Apache-2.0
#include "rpc/admission.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

AdmissionLimits Small() {
  AdmissionLimits l;
  l.max_tcp_connections = 4;
  l.max_unix_connections = 4;
  l.max_connections_per_peer = 2;
  l.max_privileged_unix_connections = 2;
  l.max_buffered_bytes = 1000;
  l.max_buffered_bytes_per_peer = 600;
  l.free_buffer_bytes = 100;
  return l;
}

TEST(AdmissionTest, EachPeerGetsItsShareOfEachPool) {
  AdmissionBudget b(Small());
  EXPECT_TRUE(b.Admit(ConnectionPool::kTcp, "uid:65534").ok());
  EXPECT_TRUE(b.Admit(ConnectionPool::kUnix, "uid:65534").ok());
  Status third = b.Admit(ConnectionPool::kTcp, "uid:65534");
  EXPECT_EQ(third.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(third.message().find("uid:65534"), std::string::npos) << third.message();
  EXPECT_TRUE(b.Admit(ConnectionPool::kTcp, "uid:1000").ok());
  b.Leave(ConnectionPool::kTcp, "uid:65534");
  EXPECT_TRUE(b.Admit(ConnectionPool::kTcp, "uid:65534").ok());
}

TEST(AdmissionTest, ThePrivilegedUnixPoolIsNotSharedWithAnyone) {
  AdmissionBudget b(Small());
  for (const char* peer : {"uid:1", "uid:2", "uid:3", "uid:4"}) {
    ASSERT_TRUE(b.Admit(ConnectionPool::kUnix, peer).ok());
  }
  EXPECT_FALSE(b.Admit(ConnectionPool::kUnix, "uid:5").ok());           // The unix pool is full...
  EXPECT_TRUE(b.Admit(ConnectionPool::kPrivilegedUnix, "uid:0").ok());  // ...root's is not.
  EXPECT_TRUE(b.Admit(ConnectionPool::kPrivilegedUnix, "uid:0").ok());
  EXPECT_FALSE(b.Admit(ConnectionPool::kPrivilegedUnix, "uid:0").ok());  // Its own cap.
  EXPECT_TRUE(b.Admit(ConnectionPool::kTcp, "uid:0").ok());  // Not charged to root's TCP share.
  EXPECT_EQ(b.connections(ConnectionPool::kPrivilegedUnix), 2u);
}

TEST(AdmissionTest, BufferedBytesAreBudgetedInTotalAndPerPeer) {
  AdmissionBudget b(Small());
  EXPECT_TRUE(b.MayBuffer("uid:7", 0));
  b.Recharge("uid:7", 0, 500);
  EXPECT_TRUE(b.MayBuffer("uid:7", 500));
  b.Recharge("uid:7", 500, 600);
  EXPECT_FALSE(b.MayBuffer("uid:7", 600));  // Its share is used up...
  EXPECT_TRUE(b.MayBuffer("uid:7", 50));    // ...but a small request always fits.
  EXPECT_TRUE(b.MayBuffer("uid:8", 200));
  b.Recharge("uid:8", 0, 400);
  EXPECT_EQ(b.buffered_bytes(), 1000u);
  EXPECT_FALSE(b.MayBuffer("uid:9", 100));  // The total is used up.
  EXPECT_TRUE(b.MayBuffer("uid:9", 99));
  b.Recharge("uid:7", 600, 0);
  b.Recharge("uid:8", 400, 0);
  EXPECT_EQ(b.buffered_bytes(), 0u);
  EXPECT_TRUE(b.MayBuffer("uid:9", 500));
}

}  // namespace
}  // namespace vigil
