// SPDX-License-Identifier: Apache-2.0
#include "base/http_authorization.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(HttpAuthorizationTest, Base64MatchesRfc4648) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("\xff\xfe"), "//4=");
}

TEST(HttpAuthorizationTest, BearerAndBasicLines) {
  EXPECT_EQ(*ParseAuthorization("# Grafana Cloud\n\nbearer glc_abc.def\n", "f"),
            "Bearer glc_abc.def");
  EXPECT_EQ(*ParseAuthorization("  basic  Aladdin:open sesame  \n", "f"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
}

TEST(HttpAuthorizationTest, AnythingElseIsRefusedNamingTheFile) {
  for (const char* bad : {"", "# only a comment\n", "token-without-scheme", "basic nocolon",
                          "bearer", "digest user:pw"}) {
    StatusOr<std::string> r = ParseAuthorization(bad, "/etc/vigil/rw-auth");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("/etc/vigil/rw-auth"), std::string::npos);
  }
  EXPECT_FALSE(ReadAuthorizationFile("/nonexistent/vigil-auth").ok());
}

}  // namespace
}  // namespace vigil
