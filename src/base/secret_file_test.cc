// SPDX-License-Identifier: Apache-2.0
#include "base/secret_file.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

TEST(SecretFileTest, ModeExposureNamesWhoCanReadOrWrite) {
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0600), "");
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0400), "");
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0644), "mode 0644: readable by group and others");
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0640), "mode 0640: readable by group");
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0604), "mode 0604: readable by others");
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0622), "mode 0622: writable by group or others");
  EXPECT_EQ(SecretModeExposure(S_IFREG | 0666),
            "mode 0666: readable by group and others, writable by group or others");
}

TEST(SecretFileTest, WorldReadableTokenIsAllowedWithAWarningAndRefusedWhenStrict) {
  char tmpl[] = "/tmp/vigil_secret_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string open_token = JoinPath(dir, "open");
  const std::string closed_token = JoinPath(dir, "closed");
  ASSERT_TRUE(WriteFileAtomic(open_token, "t0ken\n", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(closed_token, "t0ken\n", 0600).ok());
  ASSERT_EQ(chmod(open_token.c_str(), 0644), 0);  // Whatever the umask.

  const Status lenient = CheckSecretFile(open_token, "--token-file", false);
  const Status strict = CheckSecretFile(open_token, "--token-file", true);

  EXPECT_TRUE(lenient.ok()) << lenient.ToString();
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(strict.message().find("--token-file " + open_token + " is mode 0644"),
            std::string::npos)
      << strict.message();
  EXPECT_TRUE(CheckSecretFile(closed_token, "--token-file", true).ok());
  EXPECT_TRUE(CheckSecretFile(JoinPath(dir, "missing"), "--token-file", true).ok());
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace vigil
