// SPDX-License-Identifier: Apache-2.0
// Time and step parameters of the HTTP query API (/api/v1/range): absolute times as Unix seconds
// ("1764410994.5") or RFC 3339 ("2026-11-29T10:09:54Z", "...54.123+01:00"), "now", or an offset
// from now ("-5m", "5m" both mean five minutes ago). Steps are durations ("15s") or seconds.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace vigil {

StatusOr<int64_t> ParseApiTime(std::string_view text, int64_t now_ns);
StatusOr<int64_t> ParseApiStep(std::string_view text);
// The work a range query may ask for, shared by /api/v1/range and vigilRange: every stored point
// over at most 6 h (step 0), or at most 11,000 steps per series. InvalidArgument beyond, naming
// the smallest step that would do. `start` <= `end`, both >= 0.
Status CheckRangeWork(int64_t start_ns, int64_t end_ns, int64_t step_ns);
// RFC 3339 only; exposed for tests.
StatusOr<int64_t> ParseRfc3339(std::string_view text);

}  // namespace vigil
