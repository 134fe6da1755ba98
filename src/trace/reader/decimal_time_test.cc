// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/decimal_time.h"

#include <gtest/gtest.h>

namespace vigil::trace {
namespace {

int64_t Ns(std::string_view s, bool* frac = nullptr) {
  int64_t ns = 0;
  bool f = false;
  EXPECT_TRUE(ParseMicrosToNanos(s, &ns, &f)) << s;
  if (frac != nullptr) *frac = f;
  return ns;
}

TEST(DecimalTimeTest, IntegerMicrosecondsBecomeExactNanoseconds) {
  bool frac = true;
  EXPECT_EQ(Ns("1661203462598738", &frac), 1661203462598738000LL);
  EXPECT_FALSE(frac);
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("-17"), -17000);
}

TEST(DecimalTimeTest, FractionKeepsEveryNanosecondWithoutDoubleRounding) {
  bool frac = false;
  EXPECT_EQ(Ns("1419247332972.313", &frac), 1419247332972313LL);
  EXPECT_TRUE(frac);
  // 4909914216204.635 is not representable as a double; the text is exact.
  EXPECT_EQ(Ns("4909914216204.635"), 4909914216204635LL);
  EXPECT_EQ(Ns("2.5"), 2500);
  EXPECT_EQ(Ns("2.05"), 2050);
  EXPECT_EQ(Ns("1.0"), 1000);
}

TEST(DecimalTimeTest, SubNanosecondDigitsRoundToNearest) {
  EXPECT_EQ(Ns("1.2344"), 1234);
  EXPECT_EQ(Ns("1.2345"), 1235);
  EXPECT_EQ(Ns("-1.2346"), -1235);
}

TEST(DecimalTimeTest, ExponentFallsBackToDoubleWithoutScalingError) {
  EXPECT_EQ(Ns("1.5e3"), 1500000);
  // Old traces write large integers in exponent form; x1000 must not add stray nanoseconds.
  EXPECT_EQ(Ns("1.672876799195184e+15"), 1672876799195184000LL);
}

TEST(DecimalTimeTest, RejectsNonNumbers) {
  int64_t ns = 0;
  bool f = false;
  EXPECT_FALSE(ParseMicrosToNanos("", &ns, &f));
  EXPECT_FALSE(ParseMicrosToNanos("abc", &ns, &f));
  EXPECT_FALSE(ParseMicrosToNanos("1.", &ns, &f));
  EXPECT_FALSE(ParseMicrosToNanos("1x", &ns, &f));
}

TEST(DecimalTimeTest, IntegerTokensAcceptUint64AndTrailingZeroFraction) {
  int64_t v = 0;
  EXPECT_TRUE(ParseIntegerToken("42", &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(ParseIntegerToken("7.0", &v));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(ParseIntegerToken("18446744073709551615", &v));
  EXPECT_EQ(v, -1);
  EXPECT_FALSE(ParseIntegerToken("7.5", &v));
}

}  // namespace
}  // namespace vigil::trace
