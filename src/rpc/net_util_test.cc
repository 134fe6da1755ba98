// SPDX-License-Identifier: Apache-2.0
#include "rpc/net_util.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(NetUtilTest, ParsesHostPortForms) {
  auto a = ParseHostPort("127.0.0.1:1778");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 1778);
  auto b = ParseHostPort("[::1]:9");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 9);
  auto c = ParseHostPort("node01", 1778);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "node01");
  EXPECT_EQ(c->port, 1778);
  auto d = ParseHostPort(":0");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->host, "");
}

TEST(NetUtilTest, RejectsBadAddresses) {
  EXPECT_FALSE(ParseHostPort("node01").ok());  // No port and no default.
  EXPECT_FALSE(ParseHostPort("host:99999").ok());
  EXPECT_FALSE(ParseHostPort("host:abc").ok());
  EXPECT_FALSE(ParseHostPort("[::1").ok());
}

TEST(NetUtilTest, LoopbackListenAddresses) {
  EXPECT_TRUE(*IsLoopbackListenAddress("127.0.0.1:0"));
  EXPECT_TRUE(*IsLoopbackListenAddress("127.3.2.1:0"));
  EXPECT_TRUE(*IsLoopbackListenAddress("[::1]:0"));
  EXPECT_FALSE(*IsLoopbackListenAddress("0.0.0.0:0"));
  EXPECT_FALSE(*IsLoopbackListenAddress("[::]:0"));
  EXPECT_FALSE(*IsLoopbackListenAddress(":0"));
}

TEST(NetUtilTest, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(NetUtilTest, ConnectToNothingIsUnavailable) {
  auto fd = ConnectTo("unix:/tmp/vigil-no-such-dir-x/none.sock", 1'000'000'000);
  EXPECT_EQ(fd.status().code(), StatusCode::kUnavailable) << fd.status().ToString();
}

}  // namespace
}  // namespace vigil
