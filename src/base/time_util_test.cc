// SPDX-License-Identifier: Apache-2.0
#include "base/time_util.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(TimeUtilTest, ParsesDurations) {
  EXPECT_EQ(*ParseDuration("10s"), 10 * kNanosPerSecond);
  EXPECT_EQ(*ParseDuration("250ms"), 250 * kNanosPerMilli);
  EXPECT_EQ(*ParseDuration("1.5s"), 1500 * kNanosPerMilli);
  EXPECT_EQ(*ParseDuration("7d"), 7 * 86400 * kNanosPerSecond);
  EXPECT_EQ(*ParseDuration("3"), 3 * kNanosPerSecond);
  EXPECT_FALSE(ParseDuration("10 parsecs").ok());
  EXPECT_FALSE(ParseDuration("-1s").ok());
}

TEST(TimeUtilTest, FormatsDurationsAndTimestamps) {
  EXPECT_EQ(FormatDuration(1500 * kNanosPerMilli), "1.5s");
  EXPECT_EQ(FormatDuration(60 * kNanosPerSecond), "1m");
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01T00:00:00.000Z");
}

TEST(TimeUtilTest, FloorDivRoundsTowardsMinusInfinity) {
  EXPECT_EQ(FloorDiv(119, 60), 1);
  EXPECT_EQ(FloorDiv(120, 60), 2);
  EXPECT_EQ(FloorDiv(-1, 60), -1);
  EXPECT_EQ(FloorDiv(-60, 60), -1);
  EXPECT_EQ(FloorDiv(-61, 60), -2);
  EXPECT_EQ(FloorDiv(0, 60), 0);
}

}  // namespace
}  // namespace vigil
