// SPDX-License-Identifier: Apache-2.0
#include "collectors/kept_files.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::ScratchTree;

TEST(KeptFilesTest, RereadsWhatIsThereNowWrittenInPlaceReplacedOrRemoved) {
  ScratchTree tree;
  const std::string path = tree.paths().Proc("meminfo");
  tree.Write("proc/meminfo", "MemTotal: 1 kB\n");
  KeptFiles files;
  std::string text;
  ASSERT_TRUE(files.ReadInto(path, &text).ok());
  EXPECT_EQ(text, "MemTotal: 1 kB\n");

  tree.Write("proc/meminfo", "MemTotal: 22 kB\n");  // Same file, new text.
  ASSERT_TRUE(files.ReadInto(path, &text).ok());
  EXPECT_EQ(text, "MemTotal: 22 kB\n");

  tree.Write("proc/meminfo.new", "replaced\n");  // Another file renamed over it.
  std::filesystem::rename(path + ".new", path);
  ASSERT_TRUE(files.ReadInto(path, &text).ok());
  EXPECT_EQ(text, "replaced\n");

  std::filesystem::remove(path);
  Status gone = files.ReadInto(path, &text);
  EXPECT_EQ(gone.code(), StatusCode::kNotFound) << gone.ToString();
  EXPECT_TRUE(text.empty());
  tree.Write("proc/meminfo", "back\n");
  ASSERT_TRUE(files.ReadInto(path, &text).ok());
  EXPECT_EQ(text, "back\n");
}

TEST(KeptFilesTest, ProcFilesAreProducedAgainOnEachRead) {
  KeptFiles files;
  std::string first;
  std::string second;
  ASSERT_TRUE(files.ReadInto("/proc/self/stat", &first).ok());
  ASSERT_TRUE(files.ReadInto("/proc/self/stat", &second).ok());
  EXPECT_EQ(first.substr(0, first.find(' ')), std::to_string(getpid()));
  EXPECT_EQ(second.substr(0, second.find(' ')), std::to_string(getpid()));
  // A file longer than the first pread (4 KiB) still comes back whole, on every read.
  std::string whole;
  ASSERT_TRUE(ReadFileInto("/proc/self/maps", &whole).ok());
  for (int i = 0; i < 3; ++i) {
    std::string kept;
    ASSERT_TRUE(files.ReadInto("/proc/self/maps", &kept).ok());
    EXPECT_FALSE(kept.empty());
    EXPECT_EQ(kept.back(), '\n');
    EXPECT_EQ(kept.substr(0, 12), whole.substr(0, 12));
  }
}

TEST(KeptFilesTest, SizeCapIsDataLossNamingTheFile) {
  ScratchTree tree;
  tree.Write("proc/big", std::string(10000, 'x'));
  KeptFiles files;
  std::string text;
  Status s = files.ReadInto(tree.paths().Proc("big"), &text, 4096);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("big"), std::string::npos);
  EXPECT_TRUE(files.ReadInto(tree.paths().Proc("big"), &text, 20000).ok());
  EXPECT_EQ(text.size(), 10000u);
}

TEST(KeptFilesTest, PastTheProcessBudgetReadsStillWork) {
  ScratchTree tree;
  tree.Write("proc/a", "1\n");
  int taken = 0;
  while (taken < kMaxKeptFiles && TakeKeptFileSlot()) {
    ++taken;
  }
  KeptFiles files;
  std::string text;
  EXPECT_TRUE(files.ReadInto(tree.paths().Proc("a"), &text).ok());
  EXPECT_EQ(text, "1\n");
  ReturnKeptFileSlots(taken);
}

}  // namespace
}  // namespace vigil
