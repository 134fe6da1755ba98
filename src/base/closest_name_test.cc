// SPDX-License-Identifier: Apache-2.0
#include "base/closest_name.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ClosestNameTest, EditDistanceCountsASwapOnce) {
  EXPECT_EQ(EditDistance("stauts", "status"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
}

TEST(ClosestNameTest, ClosestNameTakesTyposAndUniquePrefixesOnly) {
  const std::vector<std::string> commands = {"status", "metrics", "top", "trace", "version"};
  EXPECT_EQ(ClosestName("stauts", commands), "status");
  EXPECT_EQ(ClosestName("metric", commands), "metrics");
  EXPECT_EQ(ClosestName("trcae", commands), "trace");
  EXPECT_EQ(ClosestName("deploy", commands), "");  // Nothing near: no guess.
  EXPECT_EQ(ClosestName("tpo", commands), "top");
  // Two edits of a four-letter name make another word, not a typo.
  EXPECT_EQ(ClosestName("--nope", {"--once", "--help"}), "");
  EXPECT_EQ(ClosestName("--jsn", {"--json", "--once"}), "--json");
  EXPECT_EQ(ClosestName("--dur", {"--duration-ms", "--json"}), "--duration-ms");
  EXPECT_EQ(ClosestName("--with", {"--with-stacks", "--with-flops"}), "");  // Ambiguous prefix.
}

}  // namespace
}  // namespace vigil
