// SPDX-License-Identifier: Apache-2.0
#include "base/file_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

namespace vigil {
namespace {

class FileUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vigil_file_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

TEST_F(FileUtilTest, WritesAtomicallyAndReadsBack) {
  const std::string path = JoinPath(dir_, "a/b/c.txt");
  ASSERT_TRUE(MakeDirs(JoinPath(dir_, "a/b")).ok());

  ASSERT_TRUE(WriteFileAtomic(path, "hello\n").ok());
  auto text = ReadSmallFile(path);

  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "hello\n");
  EXPECT_FALSE(PathExists(path + ".tmp"));
}

TEST_F(FileUtilTest, MissingFileIsAbsent) {
  auto text = ReadSmallFile(JoinPath(dir_, "nope"));

  EXPECT_TRUE(IsAbsent(text.status()));
}

TEST_F(FileUtilTest, OversizedFileIsDataLossNotAllocation) {
  const std::string path = JoinPath(dir_, "big");
  ASSERT_TRUE(WriteFileAtomic(path, std::string(10000, 'x')).ok());

  auto text = ReadSmallFile(path, 100);

  EXPECT_EQ(text.status().code(), StatusCode::kDataLoss);
}

TEST_F(FileUtilTest, ReadsProcFilesThatReportZeroSize) {
  auto text = ReadSmallFile("/proc/self/status");

  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("Name:"), std::string::npos);
}

TEST_F(FileUtilTest, ListDirSkipsDots) {
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_, "x"), "1").ok());

  auto names = ListDir(dir_);

  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"x"});
}

TEST_F(FileUtilTest, ListSubdirectoriesAgreesWithIsDirectory) {
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_, "file"), "1").ok());
  ASSERT_TRUE(MakeDirs(JoinPath(dir_, "sub"), 0700).ok());
  ASSERT_EQ(symlink("sub", JoinPath(dir_, "link_to_dir").c_str()), 0);
  ASSERT_EQ(symlink("file", JoinPath(dir_, "link_to_file").c_str()), 0);
  ASSERT_EQ(symlink("missing", JoinPath(dir_, "dangling").c_str()), 0);

  auto subdirs = ListSubdirectories(dir_);

  ASSERT_TRUE(subdirs.ok());
  std::sort(subdirs->begin(), subdirs->end());
  EXPECT_EQ(*subdirs, (std::vector<std::string>{"link_to_dir", "sub"}));
  auto all = ListDir(dir_);
  ASSERT_TRUE(all.ok());
  std::vector<std::string> by_stat;
  for (const std::string& name : *all) {
    if (IsDirectory(JoinPath(dir_, name))) by_stat.push_back(name);
  }
  std::sort(by_stat.begin(), by_stat.end());
  EXPECT_EQ(*subdirs, by_stat);
  EXPECT_FALSE(ListSubdirectories(JoinPath(dir_, "file")).ok());
}

}  // namespace
}  // namespace vigil
