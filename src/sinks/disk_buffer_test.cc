// SPDX-License-Identifier: Apache-2.0
#include "sinks/disk_buffer.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

class DiskBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/rwbuf-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = std::string(templ) + "/buffer";  // Not there yet: Open creates it.
  }
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::path(dir_).parent_path());
  }

  std::unique_ptr<DiskBuffer> Open(size_t max_bytes = 1 << 20) {
    StatusOr<std::unique_ptr<DiskBuffer>> b =
        DiskBuffer::Open({.dir = dir_, .max_bytes = max_bytes});
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(b).value() : nullptr;
  }
  std::vector<std::string> Drain(DiskBuffer* b) {
    std::vector<std::string> out;
    while (!b->empty()) {
      StatusOr<std::string> p = b->Front();
      if (!p.ok()) {
        break;
      }
      out.push_back(*p);
      EXPECT_TRUE(b->PopFront().ok());
    }
    return out;
  }
  std::vector<std::string> Files() {
    std::vector<std::string> names = *ListDir(dir_);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(DiskBufferTest, ReplaysInAppendOrder) {
  auto b = Open();
  for (const char* p : {"one", "two", "three"}) {
    ASSERT_TRUE(b->Append(p).ok());
  }
  EXPECT_EQ(b->size(), 3u);
  EXPECT_EQ(b->bytes(), 11u);
  EXPECT_EQ(Drain(b.get()), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_TRUE(Files().empty());
  EXPECT_EQ(b->Front().status().code(), StatusCode::kNotFound);
}

TEST_F(DiskBufferTest, SurvivesReopenAndKeepsOrderAcrossRuns) {
  {
    auto b = Open();
    ASSERT_TRUE(b->Append("a").ok());
    ASSERT_TRUE(b->Append(std::string(5000, 'b')).ok());
  }
  auto b = Open();
  EXPECT_EQ(b->size(), 2u);
  EXPECT_EQ(b->bytes(), 5001u);
  ASSERT_TRUE(b->Append("c").ok());  // Sequence numbers continue after the old entries.
  EXPECT_EQ(Drain(b.get()), (std::vector<std::string>{"a", std::string(5000, 'b'), "c"}));
}

TEST_F(DiskBufferTest, BoundDropsOldestAndCounts) {
  auto b = Open(10);
  ASSERT_TRUE(b->Append("1234").ok());
  ASSERT_TRUE(b->Append("5678").ok());
  ASSERT_TRUE(b->Append("abcd").ok());  // 12 > 10: "1234" goes.
  EXPECT_EQ(b->dropped(), 1u);
  EXPECT_EQ(b->bytes(), 8u);
  EXPECT_EQ(Files().size(), 2u);
  EXPECT_EQ(b->Append("this is longer than ten").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(b->dropped(), 2u);
  EXPECT_EQ(Drain(b.get()), (std::vector<std::string>{"5678", "abcd"}));
}

TEST_F(DiskBufferTest, ReopenWithSmallerBoundDropsOldest) {
  {
    auto b = Open();
    for (const char* p : {"aaaa", "bbbb", "cccc"}) {
      ASSERT_TRUE(b->Append(p).ok());
    }
  }
  auto b = Open(8);
  EXPECT_EQ(b->dropped(), 1u);
  EXPECT_EQ(Drain(b.get()), (std::vector<std::string>{"bbbb", "cccc"}));
}

TEST_F(DiskBufferTest, CorruptEntryIsSkippedAndCounted) {
  auto b = Open();
  ASSERT_TRUE(b->Append("good1").ok());
  ASSERT_TRUE(b->Append("bad").ok());
  ASSERT_TRUE(b->Append("good2").ok());
  const std::vector<std::string> files = Files();
  ASSERT_EQ(files.size(), 3u);
  std::string contents = *ReadSmallFile(JoinPath(dir_, files[1]));
  contents.back() ^= 0x20;  // Flip a payload bit: the checksum no longer matches.
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_, files[1]), contents).ok());
  EXPECT_EQ(Drain(b.get()), (std::vector<std::string>{"good1", "good2"}));
  EXPECT_EQ(b->corrupt(), 1u);
}

TEST_F(DiskBufferTest, LeftoverTemporaryAndForeignFilesAreIgnored) {
  ASSERT_TRUE(MakeDirs(dir_).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_, "00000000000000000001.rwb.tmp"), "torn").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_, "README"), "not ours").ok());
  auto b = Open();
  EXPECT_TRUE(b->empty());
  EXPECT_EQ(Files(), (std::vector<std::string>{"README"}));
}

TEST(DiskBufferMemoryTest, EmptyDirKeepsPayloadsInMemory) {
  StatusOr<std::unique_ptr<DiskBuffer>> b = DiskBuffer::Open({.dir = "", .max_bytes = 6});
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE((*b)->persistent());
  ASSERT_TRUE((*b)->Append("abc").ok());
  ASSERT_TRUE((*b)->Append("def").ok());
  ASSERT_TRUE((*b)->Append("ghi").ok());
  EXPECT_EQ((*b)->dropped(), 1u);
  EXPECT_EQ(*(*b)->Front(), "def");
  ASSERT_TRUE((*b)->PopFront().ok());
  EXPECT_EQ(*(*b)->Front(), "ghi");
}

}  // namespace
}  // namespace vigil
