// SPDX-License-Identifier: Apache-2.0
// Exact conversion of a JSON number of microseconds ("1419247332972.313", "17", "-3.5e2") to
// int64 nanoseconds, from the number's text rather than through a double, so nanosecond-resolution
// timestamps keep every digit. Pure functions, thread-safe.
// Owner: trace.
#pragma once

#include <cstdint>
#include <string_view>

namespace vigil::trace {

// Parses `text` (a JSON number token) as microseconds. Digits beyond the third decimal round to
// the nearest nanosecond (half away from zero). Sets *had_fraction when the text has a non-zero
// fractional part. Returns false when the text is not a number.
bool ParseMicrosToNanos(std::string_view text, int64_t* ns, bool* had_fraction);

// Same for an integer token (pid, stream, correlation, ...). Accepts "12" and "12.0".
bool ParseIntegerToken(std::string_view text, int64_t* value);

}  // namespace vigil::trace
