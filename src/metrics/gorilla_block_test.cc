// SPDX-License-Identifier: Apache-2.0
#include "metrics/gorilla_block.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr int64_t kSecond = 1000 * 1000 * 1000;

// Encodes the points, decodes them, and checks every time and value bit for bit.
void ExpectRoundTrip(const std::vector<Point>& points) {
  GorillaEncoder encoder;
  for (const Point& p : points) {
    ASSERT_TRUE(encoder.Append(p.time_ns, p.value).ok());
  }
  ASSERT_EQ(encoder.count(), points.size());
  // The open block decodes too, before sealing.
  auto open = DecodeBlock(encoder.bytes(), encoder.count());
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  GorillaBlock block = encoder.Seal();
  EXPECT_TRUE(encoder.empty());
  ASSERT_EQ(block.count, points.size());
  if (!points.empty()) {
    EXPECT_EQ(block.first_time, points.front().time_ns);
    EXPECT_EQ(block.last_time, points.back().time_ns);
  }
  auto decoded = DecodeBlock(block.bytes(), block.count);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ((*decoded)[i].time_ns, points[i].time_ns) << "point " << i;
    EXPECT_EQ(std::bit_cast<uint64_t>((*decoded)[i].value),
              std::bit_cast<uint64_t>(points[i].value))
        << "point " << i << " expected " << points[i].value << " got " << (*decoded)[i].value;
    EXPECT_EQ(std::bit_cast<uint64_t>((*open)[i].value), std::bit_cast<uint64_t>(points[i].value));
  }
}

TEST(BitStreamTest, WritesAndReadsMixedWidths) {
  BitWriter w;
  w.WriteBits(0b1, 1);
  w.WriteBits(0x3ff, 10);
  w.WriteBits(0xdeadbeefcafef00dULL, 64);
  w.WriteBits(0, 3);
  w.WriteBits(0x5, 3);
  EXPECT_EQ(w.bit_count(), 81u);
  EXPECT_EQ(w.bytes().size(), 11u);

  BitReader r(w.bytes());
  uint64_t v = 0;
  ASSERT_TRUE(r.ReadBits(1, &v));
  EXPECT_EQ(v, 1u);
  ASSERT_TRUE(r.ReadBits(10, &v));
  EXPECT_EQ(v, 0x3ffu);
  ASSERT_TRUE(r.ReadBits(64, &v));
  EXPECT_EQ(v, 0xdeadbeefcafef00dULL);
  ASSERT_TRUE(r.ReadBits(3, &v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(r.ReadBits(3, &v));
  EXPECT_EQ(v, 5u);
  // 7 padding bits remain in the last byte; 8 do not.
  EXPECT_FALSE(r.ReadBits(8, &v));
}

TEST(GorillaBlockTest, RoundTripsSpecialValues) {
  const double kInf = std::numeric_limits<double>::infinity();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values = {
      0.0,
      -0.0,
      0.0,
      kNan,
      kNan,
      kInf,
      -kInf,
      1.0,
      -1.0,
      std::numeric_limits<double>::max(),
      std::numeric_limits<double>::lowest(),
      std::numeric_limits<double>::min(),
      std::numeric_limits<double>::denorm_min(),
      -std::numeric_limits<double>::denorm_min(),
      1e300,
      1e-300,
      0.1,
      0.2,
      0.30000000000000004,
      9007199254740993.0,  // Above 2^53: not an exact decimal path.
      -123456.789,
      std::bit_cast<double>(uint64_t{0x7ff0000000000001}),  // sNaN bits.
      std::bit_cast<double>(uint64_t{0xfff8000000000abc}),  // NaN payload.
      42.0};
  std::vector<Point> points;
  for (size_t i = 0; i < values.size(); ++i) {
    points.push_back({1'700'000'000 * kSecond + static_cast<int64_t>(i) * kSecond, values[i]});
  }
  ExpectRoundTrip(points);
}

TEST(GorillaBlockTest, IdenticalValuesCostAboutTwoBitsEach) {
  std::vector<Point> points;
  for (int i = 0; i < 120; ++i) {
    points.push_back({1'700'000'000 * kSecond + i * kSecond, 3.25});
  }
  ExpectRoundTrip(points);
  GorillaEncoder encoder;
  for (const Point& p : points) {
    ASSERT_TRUE(encoder.Append(p.time_ns, p.value).ok());
  }
  // First point 128 bits, second interval ~36 bits, then 1 bit time + 1 bit value.
  EXPECT_LE(encoder.bit_count(), 128u + 40u + 2u * 118u);
}

TEST(GorillaBlockTest, RoundTripsIrregularTimestamps) {
  std::mt19937_64 rng(7);
  std::vector<Point> points;
  int64_t t = -5 * kSecond;  // Negative times (before the epoch) are valid too.
  // Deltas across every bucket: 1 ns, jitter of us, ms and s, and multi-hour gaps.
  const int64_t kSteps[] = {
      1,       1000,    15'000, 3 * 1000 * 1000, 900 * 1000 * 1000, 7 * kSecond, 3 * 3600 * kSecond,
      kSecond, kSecond, kSecond};
  for (int i = 0; i < 300; ++i) {
    t += kSteps[rng() % std::size(kSteps)] + static_cast<int64_t>(rng() % 3);
    points.push_back({t, static_cast<double>(i % 7)});
  }
  ExpectRoundTrip(points);
}

TEST(GorillaBlockTest, RoundTripsExtremeTimes) {
  ExpectRoundTrip({{std::numeric_limits<int64_t>::min(), 1.0},
                   {-1, 2.0},
                   {0, 3.0},
                   {std::numeric_limits<int64_t>::max() - 1, 4.0},
                   {std::numeric_limits<int64_t>::max(), 5.0}});
}

TEST(GorillaBlockTest, RejectsTimeThatDoesNotAdvance) {
  GorillaEncoder encoder;
  ASSERT_TRUE(encoder.Append(100, 1.0).ok());
  EXPECT_EQ(encoder.Append(100, 2.0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(encoder.Append(99, 2.0).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(encoder.Append(101, 2.0).ok());
  EXPECT_EQ(encoder.count(), 2u);
  auto decoded = DecodeBlock(encoder.bytes(), encoder.count());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ((*decoded)[1].time_ns, 101);
  EXPECT_EQ((*decoded)[1].value, 2.0);
}

TEST(GorillaBlockTest, RoundTripsRandomBitPatterns) {
  std::mt19937_64 rng(42);
  std::vector<Point> points;
  for (int i = 0; i < 500; ++i) {
    points.push_back({i * kSecond, std::bit_cast<double>(rng())});
  }
  ExpectRoundTrip(points);
}

TEST(GorillaBlockTest, RoundTripsDecimalSeriesAndSwitchesScale) {
  std::mt19937_64 rng(3);
  std::vector<Point> points;
  int64_t ticks = 123456789;
  for (int i = 0; i < 400; ++i) {
    ticks += static_cast<int64_t>(rng() % 200);
    double v = static_cast<double>(ticks) / 100.0;  // cpu seconds from USER_HZ ticks.
    if (i % 50 == 17) {
      v = static_cast<double>(ticks) / 1000.0;  // A different scale now and then.
    }
    if (i % 90 == 5) {
      v = -v;
    }
    points.push_back({i * kSecond, v});
  }
  ExpectRoundTrip(points);
}

TEST(GorillaBlockTest, DecimalValuesCostTheirIntegerDelta) {
  // ticks/100 has a noisy binary mantissa (plain XOR needs ~40-60 bits a value); the decimal path
  // stores the tick delta: 1 bit time + 2 bits code + 9 bits bucket.
  std::mt19937_64 rng(11);
  GorillaEncoder encoder;
  int64_t ticks = 50'000'000;
  size_t bits_after_two = 0;
  for (int i = 0; i < 120; ++i) {
    ticks += static_cast<int64_t>(rng() % 100) + 1;
    ASSERT_TRUE(encoder.Append(i * kSecond, static_cast<double>(ticks) / 100.0).ok());
    if (i == 1) {
      bits_after_two = encoder.bit_count();
    }
  }
  EXPECT_EQ(encoder.bit_count() - bits_after_two, 118u * 12u);
}

TEST(GorillaBlockTest, TruncatedDataIsReportedAsDataLoss) {
  GorillaEncoder encoder;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(encoder.Append(i * kSecond, i * 1.5).ok());
  }
  std::vector<uint8_t> bytes(encoder.bytes().begin(), encoder.bytes().end());
  bytes.resize(bytes.size() / 2);
  auto decoded = DecodeBlock(bytes, encoder.count());
  EXPECT_EQ(decoded.status().code(), StatusCode::kDataLoss);
}

TEST(GorillaBlockTest, EmptyBlockDecodesToNothing) {
  GorillaEncoder encoder;
  GorillaBlock block = encoder.Seal();
  EXPECT_EQ(block.count, 0u);
  auto decoded = DecodeBlock(block.bytes(), block.count);
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->empty());
}

TEST(HeapBytesTest, MatchesGlibcChunkSizes) {
  EXPECT_EQ(HeapBytes(0), 0u);
  EXPECT_EQ(HeapBytes(1), 32u);
  EXPECT_EQ(HeapBytes(24), 32u);
  EXPECT_EQ(HeapBytes(25), 48u);
  EXPECT_EQ(HeapBytes(200), 208u);
}

}  // namespace
}  // namespace vigil
