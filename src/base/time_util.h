// SPDX-License-Identifier: Apache-2.0
// Clocks and durations. Sample times are int64 nanoseconds since the Unix epoch (UTC); intervals
// are measured on the monotonic clock. Durations in flags and config read "10s", "500ms", "1m".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

inline constexpr int64_t kNanosPerMicro = 1000;
inline constexpr int64_t kNanosPerMilli = 1000 * 1000;
inline constexpr int64_t kNanosPerSecond = 1000 * 1000 * 1000;
inline constexpr int64_t kNanosPerMinute = 60 * kNanosPerSecond;

// a / b rounded towards minus infinity (the bucket a time falls in, before 1970 too); b != 0.
constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

int64_t UnixNanos();
int64_t MonotonicNanos();
// Parses "250ms", "10s", "1.5s", "2m", "1h", "7d", "100us", "5ns"; a bare number is seconds.
StatusOr<int64_t> ParseDuration(std::string_view text);
// 1500000000 -> "1.5s", 60000000000 -> "1m".
std::string FormatDuration(int64_t nanos);
// RFC 3339 UTC with milliseconds: "2026-11-29T10:09:54.123Z".
std::string FormatTimestamp(int64_t unix_nanos);

}  // namespace vigil
