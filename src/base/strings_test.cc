// SPDX-License-Identifier: Apache-2.0
#include "base/strings.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(StringsTest, SplitKeepsEmptyPieces) {
  auto parts = Split("a::b", ':');

  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
}

TEST(StringsTest, FieldsAndLines) {
  std::string_view text = "cpu  1 2\ncpu0 3\n";
  std::string_view line;
  ASSERT_TRUE(NextLine(&text, &line));

  auto fields = SplitWhitespace(line);

  EXPECT_EQ(fields, (std::vector<std::string_view>{"cpu", "1", "2"}));
  ASSERT_TRUE(NextLine(&text, &line));
  EXPECT_EQ(line, "cpu0 3");
  EXPECT_FALSE(NextLine(&text, &line));
}

TEST(StringsTest, NumbersRejectTrailingGarbage) {
  EXPECT_EQ(ParseInt64("-42"), -42);
  EXPECT_FALSE(ParseInt64("42x"));
  EXPECT_FALSE(ParseUint64(""));
  EXPECT_DOUBLE_EQ(*ParseDouble("0.25"), 0.25);
}

TEST(StringsTest, SanitizeForLogRemovesControlCharacters) {
  EXPECT_EQ(SanitizeForLog("a\nb\x01"), "a?b?");
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(StringsTest, AppendJsonStringEscapesQuotesAndControlCharacters) {
  std::string out;

  AppendJsonString("a\"b\\c\nd\x01", &out);

  EXPECT_EQ(out, R"("a\"b\\c\nd\u0001")");
}

}  // namespace
}  // namespace vigil
