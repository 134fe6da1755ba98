// SPDX-License-Identifier: Apache-2.0
#include "snoop/privileges.h"

#include <gtest/gtest.h>

namespace vigil::snoop {
namespace {

TEST(Privileges, ReadsCapEffFromStatusText) {
  EXPECT_EQ(EffectiveCapabilities("Name:\tx\nCapInh:\t0000000000000000\n"
                                  "CapEff:\t000001ffffffffff\nCapBnd:\t0\n"),
            0x1ffffffffffull);
  EXPECT_EQ(EffectiveCapabilities("Name:\tx\n"), 0u);
}

TEST(Privileges, RootOrBpfAndPerfmon) {
  EXPECT_TRUE(CheckCapabilities(0x1ffffffffffull).ok());
  EXPECT_TRUE(CheckCapabilities(uint64_t{1} << 21).ok());  // CAP_SYS_ADMIN
  EXPECT_TRUE(CheckCapabilities((uint64_t{1} << 38) | (uint64_t{1} << 39)).ok());
  Status only_bpf = CheckCapabilities(uint64_t{1} << 39);
  EXPECT_EQ(only_bpf.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(only_bpf.message().find("CAP_BPF and CAP_PERFMON"), std::string::npos);
  EXPECT_EQ(CheckCapabilities(0).code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace vigil::snoop
