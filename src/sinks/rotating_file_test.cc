// SPDX-License-Identifier: Apache-2.0
#include "sinks/rotating_file.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

std::string MakeTempDir() {
  char templ[] = "/tmp/vigil-rotXXXXXX";
  char* dir = mkdtemp(templ);
  return dir ? std::string(dir) : std::string();
}

TEST(RotatingFileTest, RotatesBySizeAndKeepsOnlyNFiles) {
  const std::string dir = MakeTempDir();
  ASSERT_FALSE(dir.empty());
  const std::string path = dir + "/out.jsonl";
  RotatingFile file(path, /*max_bytes=*/10, /*keep_files=*/2);
  ASSERT_TRUE(file.Open().ok());
  for (const char* line : {"aaaaaa\n", "bbbbbb\n", "cccccc\n", "dddddd\n"}) {
    ASSERT_TRUE(file.Write(line).ok());
  }
  EXPECT_EQ(*ReadSmallFile(path), "dddddd\n");
  EXPECT_EQ(*ReadSmallFile(path + ".1"), "cccccc\n");
  EXPECT_EQ(*ReadSmallFile(path + ".2"), "bbbbbb\n");
  EXPECT_FALSE(PathExists(path + ".3"));  // "aaaaaa" rotated out.
  std::string cmd = "rm -rf " + dir;
  ASSERT_EQ(system(cmd.c_str()), 0);
}

TEST(RotatingFileTest, AppendsToAnExistingFile) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/sub/out.jsonl";
  {
    RotatingFile file(path, 1000, 1);
    ASSERT_TRUE(file.Open().ok());
    ASSERT_TRUE(file.Write("one\n").ok());
  }
  RotatingFile again(path, 1000, 1);
  ASSERT_TRUE(again.Open().ok());
  EXPECT_EQ(again.size(), 4u);
  ASSERT_TRUE(again.Write("two\n").ok());
  EXPECT_EQ(*ReadSmallFile(path), "one\ntwo\n");
  std::string cmd = "rm -rf " + dir;
  ASSERT_EQ(system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace vigil
