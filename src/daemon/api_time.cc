// SPDX-License-Identifier: Apache-2.0
#include "daemon/api_time.h"

#include <time.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {
namespace {

bool Digits(std::string_view text, size_t pos, size_t n, int* out) {
  if (pos + n > text.size()) {
    return false;
  }
  int value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') {
      return false;
    }
    value = value * 10 + (text[i] - '0');
  }
  *out = value;
  return true;
}

Status BadTime(std::string_view text) {
  return InvalidArgumentError("bad time '" + SanitizeForLog(text) +
                              "': want Unix seconds, RFC 3339, 'now' or an offset like -5m");
}

}  // namespace

StatusOr<int64_t> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, 0, 4, &year) || text.size() < 19 || text[4] != '-' ||
      !Digits(text, 5, 2, &month) || text[7] != '-' || !Digits(text, 8, 2, &day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !Digits(text, 11, 2, &hour) ||
      text[13] != ':' || !Digits(text, 14, 2, &minute) || text[16] != ':' ||
      !Digits(text, 17, 2, &second)) {
    return BadTime(text);
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return BadTime(text);
  }
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = kNanosPerSecond / 10;
    const size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      frac_ns += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) {
      return BadTime(text);
    }
  }
  int64_t offset_s = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (!Digits(text, pos + 1, 2, &oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !Digits(text, pos + 4, 2, &om)) {
      return BadTime(text);
    }
    offset_s = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return BadTime(text);
  }
  if (pos != text.size()) {
    return BadTime(text);
  }
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const time_t t = timegm(&tm);
  return (static_cast<int64_t>(t) - offset_s) * kNanosPerSecond + frac_ns;
}

StatusOr<int64_t> ParseApiTime(std::string_view text, int64_t now_ns) {
  text = Trim(text);
  if (text.empty() || text == "now") {
    return now_ns;
  }
  if (text.size() >= 10 && text[4] == '-') {
    return ParseRfc3339(text);
  }
  // An offset: "-5m" or "5m" (a unit is required, so "1764410994" stays a Unix time).
  std::string_view offset = text;
  if (!offset.empty() && offset[0] == '-') {
    offset.remove_prefix(1);
  }
  if (!offset.empty() && (offset.back() < '0' || offset.back() > '9') && offset.back() != '.') {
    auto d = ParseDuration(offset);
    // Before 1970 is refused too: the range handler subtracts times, which stays in int64 only
    // for non-negative ones.
    if (!d.ok() || *d > now_ns) {
      return BadTime(text);
    }
    return now_ns - *d;
  }
  auto seconds = ParseDouble(text);
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > 9.2e9) {
    return BadTime(text);
  }
  return static_cast<int64_t>(std::llround(*seconds * 1e9));
}

StatusOr<int64_t> ParseApiStep(std::string_view text) {
  text = Trim(text);
  if (text.empty()) {
    return int64_t{0};
  }
  auto d = ParseDuration(text);
  if (!d.ok()) {
    return InvalidArgumentError("bad step '" + SanitizeForLog(text) + "': want e.g. 15s or 60");
  }
  return *d;
}

Status CheckRangeWork(int64_t start_ns, int64_t end_ns, int64_t step_ns) {
  constexpr int64_t kMaxRawRangeNs = 6 * 3600 * kNanosPerSecond;
  constexpr int64_t kMaxRangeSteps = 11000;
  const int64_t span = end_ns - start_ns;  // Both in [0, 2^63): no overflow.
  if (step_ns == 0 && span > kMaxRawRangeNs) {
    return InvalidArgumentError(
        fmt::format("a window of {} with step 0 is too large: at most {} of raw points; pass a "
                    "step of at least {}",
                    FormatDuration(span), FormatDuration(kMaxRawRangeNs),
                    FormatDuration(span / kMaxRangeSteps + 1)));
  }
  if (step_ns > 0 && span / step_ns > kMaxRangeSteps) {
    return InvalidArgumentError(
        fmt::format("at most {} steps per series: pass a step of at least {}", kMaxRangeSteps,
                    FormatDuration(span / kMaxRangeSteps + 1)));
  }
  return OkStatus();
}

}  // namespace vigil
