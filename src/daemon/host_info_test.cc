// SPDX-License-Identifier: Apache-2.0
#include "daemon/host_info.h"

#include <gtest/gtest.h>

namespace vigil::daemon {
namespace {

TEST(HostInfoTest, AdvertisesTheRpcAddressWithTheHostNameForAWildcard) {
  EXPECT_EQ(AdvertisedRpcAddress("127.0.0.1:1778", "node01"), "127.0.0.1:1778");
  EXPECT_EQ(AdvertisedRpcAddress("0.0.0.0:1778", "node01"), "node01:1778");
  EXPECT_EQ(AdvertisedRpcAddress("[::]:1800", "node02"), "node02:1800");
  EXPECT_EQ(AdvertisedRpcAddress("", "node01"), "");
}

}  // namespace
}  // namespace vigil::daemon
