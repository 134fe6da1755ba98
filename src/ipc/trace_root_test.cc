// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_root.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"

namespace vigil {
namespace {

using testing_util::AsNobody;
using testing_util::kNobody;
using testing_util::ModeOf;
using testing_util::TempDir;

TEST(TraceRootTest, CreatesItselfPrivateToTheDaemonUnderASharedTmp) {
  TempDir tmp;
  chmod(tmp.path().c_str(), 01777);  // As /tmp: world-writable but sticky.
  const std::string path = tmp.path() + "/a/traces";
  const mode_t old = umask(077);
  auto root = TraceRoot::Open(path);
  umask(old);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->path(), path);
  EXPECT_EQ(ModeOf(path), 0755u);
  EXPECT_EQ(ModeOf(tmp.path() + "/a"), 0755u);
  // Opening again finds it as it is.
  EXPECT_TRUE(TraceRoot::Open(path + "/").ok());
}

TEST(TraceRootTest, RefusesARootOthersCanWriteOrThatIsALink) {
  TempDir tmp;
  const std::string legacy = tmp.path() + "/legacy";
  ASSERT_EQ(mkdir(legacy.c_str(), 0755), 0);
  chmod(legacy.c_str(), 01777);  // What an older vigild left behind.
  auto refused = TraceRoot::Open(legacy);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("writable by nobody else"), std::string::npos);

  // A symlink planted where the root should be (the attack's pre-created /tmp/vigil-traces).
  const std::string target = tmp.path() + "/victim";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), (tmp.path() + "/link").c_str()), 0);
  auto link = TraceRoot::Open(tmp.path() + "/link");
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.status().message().find("symlink"), std::string::npos);
  EXPECT_FALSE(TraceRoot::Open(tmp.path() + "/link/traces").ok());
  EXPECT_EQ(ModeOf(target), 0700u);

  // Under a directory others may write without the sticky bit: they could swap the root.
  const std::string open_parent = tmp.path() + "/open";
  ASSERT_EQ(mkdir(open_parent.c_str(), 0755), 0);
  chmod(open_parent.c_str(), 0777);
  auto swappable = TraceRoot::Open(open_parent + "/traces");
  ASSERT_FALSE(swappable.ok());
  EXPECT_NE(swappable.status().message().find("not sticky"), std::string::npos);
  EXPECT_FALSE(TraceRoot::Open("relative/traces").ok());
  EXPECT_FALSE(TraceRoot::Open(tmp.path() + "/../etc").ok());
}

TEST(TraceRootTest, RefusesARootAnotherUserOwns) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to make a directory of another user";
  }
  TempDir tmp;
  chmod(tmp.path().c_str(), 01777);
  const std::string theirs = tmp.path() + "/traces";
  // The attacker creates the root before the daemon does.
  ASSERT_EQ(AsNobody([&] { return mkdir(theirs.c_str(), 0755) == 0 ? 0 : 1; }), 0);
  auto refused = TraceRoot::Open(theirs);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("owner uid 65534"), std::string::npos);
}

TEST(TraceRootTest, TraceDirectoriesBelongToTheTracedUserAlone) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to hand directories to another user";
  }
  TempDir tmp;
  chmod(tmp.path().c_str(), 01777);
  auto root = TraceRoot::Open(tmp.path() + "/traces");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  ASSERT_TRUE(root->MakeDir("", "tr-1", kNobody).ok());
  const std::string dir = root->path() + "/tr-1";
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kNobody));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(root->MakeDir("", "tr-1", kNobody).code(), StatusCode::kAlreadyExists);

  // Another user can plant nothing in the root, and the traced user writes only its own dir.
  const std::string root_path = root->path();
  EXPECT_EQ(AsNobody([&] { return mkdir((root_path + "/evil").c_str(), 0777) == 0 ? 0 : 1; }), 1);
  EXPECT_EQ(
      AsNobody([&] { return symlink("/etc", (root_path + "/tr-1/link").c_str()) == 0 ? 0 : 1; }),
      0);

  // Several users in one trace: a daemon directory with one private directory each.
  ASSERT_TRUE(root->MakeDir("", "tr-2", -1).ok());
  ASSERT_TRUE(root->MakeDir("tr-2", "u65534", kNobody).ok());
  EXPECT_EQ(ModeOf(root_path + "/tr-2"), 0755u);
  EXPECT_EQ(ModeOf(root_path + "/tr-2/u65534"), 0700u);
  // A planted link is never a parent.
  EXPECT_FALSE(root->MakeDir("tr-1/link", "x", kNobody).ok());
  EXPECT_EQ(ModeOf("/etc"), 0755u);
}

}  // namespace
}  // namespace vigil
