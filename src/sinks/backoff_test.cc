// SPDX-License-Identifier: Apache-2.0
#include "sinks/backoff.h"

#include <set>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(BackoffTest, BaseScheduleDoublesUpToTheCap) {
  BackoffOptions o{.initial_ns = 250 * kMs, .max_ns = 30'000 * kMs, .multiplier = 2, .jitter = 0};
  Backoff b(o, 1);
  const std::vector<int64_t> expected = {250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000};
  for (int64_t ms : expected) {
    EXPECT_EQ(b.NextDelayNs(), ms * kMs);
  }
  EXPECT_EQ(Backoff::BaseDelayNs(o, 1000), 30'000 * kMs);
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b({.initial_ns = 10 * kMs, .max_ns = 1000 * kMs, .multiplier = 3, .jitter = 0}, 1);
  EXPECT_EQ(b.NextDelayNs(), 10 * kMs);
  EXPECT_EQ(b.NextDelayNs(), 30 * kMs);
  EXPECT_EQ(b.failures(), 2);
  b.Reset();
  EXPECT_EQ(b.NextDelayNs(), 10 * kMs);
}

TEST(BackoffTest, JitterShortensWithinBoundsAndVaries) {
  BackoffOptions o{.initial_ns = 1000 * kMs, .max_ns = 1000 * kMs, .multiplier = 2, .jitter = 0.2};
  Backoff b(o, 42);
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) {
    const int64_t d = b.NextDelayNs();
    EXPECT_GE(d, 800 * kMs);
    EXPECT_LE(d, 1000 * kMs);
    seen.insert(d);
  }
  EXPECT_GT(seen.size(), 100u);  // Not one fixed value: daemons do not retry in step.
}

TEST(BackoffTest, SameSeedSameSchedule) {
  BackoffOptions o;
  Backoff a(o, 7), b(o, 7);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(a.NextDelayNs(), b.NextDelayNs());
  }
}

}  // namespace
}  // namespace vigil
