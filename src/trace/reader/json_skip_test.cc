// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/json_skip.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace vigil::trace {
namespace {

// The text followed by the padding SkipJsonValue may read.
std::string Padded(const std::string& text) { return text + std::string(kJsonSkipPadding, ' '); }

size_t Skip(const std::string& text, size_t p = 0) {
  const std::string d = Padded(text);
  return SkipJsonValue(d.data(), p, text.size());
}

TEST(JsonSkipTest, FindsTheEndOfObjectsArraysAndScalars) {
  EXPECT_EQ(Skip(R"({"a": 1}, {"b": 2})"), 8u);
  EXPECT_EQ(Skip(R"([1, [2, {"x": [3]}]] tail)"), 20u);
  EXPECT_EQ(Skip(R"("str", 1)"), 5u);
  EXPECT_EQ(Skip("123, 4"), 3u);
  EXPECT_EQ(Skip("true}"), 4u);
}

TEST(JsonSkipTest, IgnoresBracketsAndEscapedQuotesInsideStrings) {
  EXPECT_EQ(Skip(R"({"name": "void f<{}>]}[", "q": "say \"}\" \\"} more)"), 46u);
  EXPECT_EQ(Skip(R"({"a": "\\\\"}x)"), 13u);
  EXPECT_EQ(Skip(R"({"a": "\\\"}"}x)"), 14u);
}

TEST(JsonSkipTest, ReportsAValueCutByTheEndOfTheWindow) {
  EXPECT_EQ(Skip(R"({"a": [1, 2)"), kNotFound);
  EXPECT_EQ(Skip(R"({"a": "}})"), kNotFound);
  EXPECT_EQ(Skip(R"("open)"), kNotFound);
  // The padding past the end is never taken for part of the value, whatever it holds.
  std::string d = R"({"a": 1)" + std::string("}") + std::string(kJsonSkipPadding, '}');
  EXPECT_EQ(SkipJsonValue(d.data(), 0, 7), kNotFound);
}

// Random nested JSON with long strings, backslash runs and brackets in strings, so that every
// case falls on and across 64-byte block boundaries: the fast scan must agree with the slow one on
// each value, whole and cut at every length.
std::string RandomValue(std::mt19937& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 4 ? 3 : 5));
  switch (kind) {
    case 0:
      return std::to_string(rng() % 100000);
    case 1:
    case 2: {
      static const char* kPieces[] = {"a",        "{", "}",   "[", "]", "\\\\", "\\\"",
                                      "\\\\\\\"", " ", "xyz", ",", ":", "\\n"};
      std::string s = "\"";
      const int n = static_cast<int>(rng() % 40);
      for (int i = 0; i < n; ++i) s += kPieces[rng() % 13];
      return s + "\"";
    }
    case 3: {
      std::string s = "[";
      const int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) s += (i ? ", " : "") + RandomValue(rng, depth + 1);
      return s + "]";
    }
    default: {
      std::string s = "{";
      const int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) {
        s += (i ? ", " : "") + RandomValue(rng, 5) + ": " + RandomValue(rng, depth + 1);
      }
      return s + "}";
    }
  }
}

TEST(JsonSkipTest, AgreesWithTheByteScanOnRandomJson) {
  std::mt19937 rng(7);
  int containers = 0;
  for (int round = 0; round < 2000; ++round) {
    const std::string value = RandomValue(rng, 0);
    const std::string text = value + ",\n {\"next\": 1}";
    const std::string d = Padded(text);
    ASSERT_EQ(SkipJsonValueSlow(d.data(), 0, text.size()), value.size()) << value;
    ASSERT_EQ(SkipJsonValue(d.data(), 0, text.size()), value.size()) << value;
    for (size_t cut = 1; cut < value.size(); ++cut) {
      ASSERT_EQ(SkipJsonValue(d.data(), 0, cut), SkipJsonValueSlow(d.data(), 0, cut))
          << value << " cut at " << cut;
    }
    containers += value[0] == '{' || value[0] == '[';
  }
  EXPECT_GT(containers, 500);
}

}  // namespace
}  // namespace vigil::trace
