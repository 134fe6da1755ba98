// SPDX-License-Identifier: Apache-2.0
#include "base/file_util.h"

#include <stdlib.h>

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

}  // namespace
}  // namespace vigil
