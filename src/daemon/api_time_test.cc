// SPDX-License-Identifier: Apache-2.0
#include "daemon/api_time.h"

#include <gtest/gtest.h>

#include "base/time_util.h"

namespace vigil {
namespace {

constexpr int64_t kNow = 1764410994LL * kNanosPerSecond;

TEST(ApiTimeTest, ParsesUnixSecondsWithFraction) {
  auto t = ParseApiTime("1764410994.5", kNow);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, 1764410994LL * kNanosPerSecond + 500 * kNanosPerMilli);
}

TEST(ApiTimeTest, ParsesRfc3339UtcAndOffsets) {
  auto utc = ParseApiTime("2025-11-29T10:09:54.123Z", kNow);
  ASSERT_TRUE(utc.ok()) << utc.status().message();
  EXPECT_EQ(*utc, 1764410994LL * kNanosPerSecond + 123 * kNanosPerMilli);
  auto plus_one = ParseRfc3339("2025-11-29T11:09:54+01:00");
  ASSERT_TRUE(plus_one.ok());
  EXPECT_EQ(*plus_one, 1764410994LL * kNanosPerSecond);
}

TEST(ApiTimeTest, RelativeOffsetsCountBackFromNow) {
  EXPECT_EQ(*ParseApiTime("-5m", kNow), kNow - 300 * kNanosPerSecond);
  EXPECT_EQ(*ParseApiTime("90s", kNow), kNow - 90 * kNanosPerSecond);
  EXPECT_EQ(*ParseApiTime("now", kNow), kNow);
  EXPECT_EQ(*ParseApiTime("", kNow), kNow);
}

TEST(ApiTimeTest, RejectsGarbage) {
  EXPECT_FALSE(ParseApiTime("yesterday", kNow).ok());
  EXPECT_FALSE(ParseApiTime("2026-13-29T10:09:54Z", kNow).ok());
  EXPECT_FALSE(ParseApiTime("2026-11-29T10:09:54", kNow).ok());  // No zone.
  EXPECT_FALSE(ParseApiTime("-5parsecs", kNow).ok());
  EXPECT_FALSE(ParseApiStep("fast").ok());
}

// 20+ digits, durations past int64 nanoseconds and offsets before 1970 are errors, not overflows.
TEST(ApiTimeTest, OutOfRangeValuesAreErrors) {
  EXPECT_EQ(ParseApiTime("123456789012345678901234", kNow).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseApiTime("99999999999999999999.5", kNow).ok());
  EXPECT_FALSE(ParseApiTime("-99999999999999999999s", kNow).ok());
  EXPECT_FALSE(ParseApiTime("-30000d", kNow).ok());  // Before 1970.
  EXPECT_FALSE(ParseApiStep("99999999999999999999").ok());
  EXPECT_FALSE(ParseApiStep("999999999999d").ok());
  EXPECT_TRUE(ParseApiTime("-20000d", kNow).ok());
}

TEST(ApiTimeTest, StepsAreDurationsOrSeconds) {
  EXPECT_EQ(*ParseApiStep("15s"), 15 * kNanosPerSecond);
  EXPECT_EQ(*ParseApiStep("60"), 60 * kNanosPerSecond);
  EXPECT_EQ(*ParseApiStep(""), 0);
}

}  // namespace
}  // namespace vigil
