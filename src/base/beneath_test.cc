// SPDX-License-Identifier: Apache-2.0
#include "base/beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr int kNobody = 65534;

class BeneathTest : public ::testing::Test {
 protected:
  BeneathTest() {
    char tmpl[] = "/tmp/vigil-beneath-XXXXXX";
    dir_ = mkdtemp(tmpl);
    handle_ = std::make_shared<const ScopedFd>(std::move(OpenDirHandle(dir_).value()));
  }
  ~BeneathTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  FileBeneath File(const std::string& relative, int owner = -1) const {
    FileBeneath f;
    f.dir = handle_;
    f.dir_path = dir_;
    f.relative = relative;
    f.owner_uid = owner;
    return f;
  }

  std::string dir_;
  std::shared_ptr<const ScopedFd> handle_;
};

TEST_F(BeneathTest, FollowsNoSymlinkAndNeverLeavesTheDirectory) {
  ASSERT_TRUE(WriteFileAtomic(Path("plain.json"), "{}").ok());
  ASSERT_EQ(mkdir(Path("sub").c_str(), 0755), 0);
  ASSERT_EQ(symlink("/etc", Path("sub/link").c_str()), 0);
  ASSERT_EQ(symlink("/etc/passwd", Path("passwd").c_str()), 0);

  EXPECT_TRUE(OpenBeneath(handle_->get(), "plain.json", O_RDONLY).ok());
  auto through = OpenBeneath(handle_->get(), "sub/link/passwd", O_RDONLY);
  ASSERT_FALSE(through.ok());
  EXPECT_NE(through.status().message().find("symlink"), std::string::npos);
  EXPECT_FALSE(OpenBeneath(handle_->get(), "passwd", O_RDONLY).ok());
  EXPECT_FALSE(OpenBeneath(handle_->get(), "../../etc/passwd", O_RDONLY).ok());
  EXPECT_FALSE(OpenBeneath(handle_->get(), "sub/../../x", O_RDONLY).ok());
  EXPECT_EQ(OpenBeneath(handle_->get(), "missing", O_RDONLY).status().code(),
            StatusCode::kNotFound);
}

TEST_F(BeneathTest, MakesADirectoryWithItsExactModeAndRefusesAPlantedName) {
  const mode_t old = umask(077);
  ASSERT_TRUE(MakeOwnedDirBeneath(handle_->get(), "open", 0755, -1).ok());
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(Path("open").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);

  ASSERT_EQ(symlink("/etc", Path("planted").c_str()), 0);
  EXPECT_EQ(MakeOwnedDirBeneath(handle_->get(), "planted", 0700, -1).code(),
            StatusCode::kAlreadyExists);
  EXPECT_FALSE(MakeOwnedDirBeneath(handle_->get(), "a/b", 0700, -1).ok());
  EXPECT_FALSE(MakeOwnedDirBeneath(handle_->get(), "..", 0700, -1).ok());
}

TEST_F(BeneathTest, HandsADirectoryToAnotherUser) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to hand a directory to another user";
  }
  ASSERT_TRUE(MakeOwnedDirBeneath(handle_->get(), "theirs", 0700, kNobody).ok());
  struct stat st {};
  ASSERT_EQ(stat(Path("theirs").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kNobody));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(BeneathTest, ReadsOnlyARegularFileOfTheExpectedOwner) {
  ASSERT_TRUE(WriteFileAtomic(Path("trace.json"), "{\"traceEvents\":[]}").ok());
  struct stat st {};
  auto fd = OpenOwnedRegularFile(File("trace.json"), &st);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_EQ(st.st_size, 18);
  EXPECT_EQ(ReadFdCapped(fd->get(), 1024, "trace").value(), "{\"traceEvents\":[]}");
  EXPECT_EQ(ReadFdCapped(fd->get(), 4, "trace").status().code(), StatusCode::kDataLoss);

  // A link to a file only root may read is refused, and so is a FIFO (without blocking).
  ASSERT_TRUE(WriteFileAtomic(Path("secret"), "root only", 0600).ok());
  ASSERT_EQ(symlink(Path("secret").c_str(), Path("link.json").c_str()), 0);
  EXPECT_FALSE(OpenOwnedRegularFile(File("link.json"), &st).ok());
  ASSERT_EQ(mkfifo(Path("fifo.json").c_str(), 0600), 0);
  EXPECT_EQ(OpenOwnedRegularFile(File("fifo.json"), &st).status().code(),
            StatusCode::kFailedPrecondition);
  // Another user's file (or a root file when another user is expected) is refused.
  auto wrong_owner = OpenOwnedRegularFile(File("trace.json", kNobody), &st);
  ASSERT_FALSE(wrong_owner.ok());
  EXPECT_NE(wrong_owner.status().message().find("owned by uid"), std::string::npos);
}

TEST_F(BeneathTest, ResolvesInsideAnotherRootWithoutEscaping) {
  ASSERT_EQ(mkdir(Path("tmp").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomic(Path("tmp/t.json"), "x").ok());
  ASSERT_EQ(symlink("/etc/passwd", Path("tmp/escape.json").c_str()), 0);
  FileBeneath in_root = File("/tmp/t.json");
  in_root.in_root = true;
  struct stat st {};
  EXPECT_TRUE(OpenOwnedRegularFile(in_root, &st).ok());
  in_root.relative = "/tmp/escape.json";
  EXPECT_FALSE(OpenOwnedRegularFile(in_root, &st).ok());
  in_root.relative = "/../../../etc/passwd";  // ".." stops at the root: not found there.
  EXPECT_EQ(OpenOwnedRegularFile(in_root, &st).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
