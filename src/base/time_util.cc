// SPDX-License-Identifier: Apache-2.0
#include "base/time_util.h"

#include <time.h>

#include <cmath>

#include <fmt/format.h>

#include "base/strings.h"

namespace vigil {

int64_t UnixNanos() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

int64_t MonotonicNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

StatusOr<int64_t> ParseDuration(std::string_view text) {
  text = Trim(text);
  size_t split = 0;
  while (split < text.size() &&
         ((text[split] >= '0' && text[split] <= '9') || text[split] == '.')) {
    ++split;
  }
  auto number = ParseDouble(text.substr(0, split));
  std::string_view unit = text.substr(split);
  if (!number || *number < 0) {
    return InvalidArgumentError("bad duration '" + std::string(text) +
                                "': want e.g. 500ms, 10s, 5m, 1h");
  }
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1e9;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60e9;
  } else if (unit == "h") {
    scale = 3600e9;
  } else if (unit == "d") {
    scale = 86400e9;
  } else {
    return InvalidArgumentError("bad duration unit in '" + std::string(text) +
                                "': want ns, us, ms, s, m, h or d");
  }
  const double nanos = *number * scale;
  if (nanos > 9.2e18) {
    return InvalidArgumentError("duration too large: " + std::string(text));
  }
  return static_cast<int64_t>(std::llround(nanos));
}

std::string FormatDuration(int64_t nanos) {
  struct Unit {
    int64_t size;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{86400 * kNanosPerSecond, "d"}, {3600 * kNanosPerSecond, "h"},
                                    {60 * kNanosPerSecond, "m"},    {kNanosPerSecond, "s"},
                                    {kNanosPerMilli, "ms"},         {kNanosPerMicro, "us"}};
  for (const Unit& u : kUnits) {
    if (nanos >= u.size) {
      return fmt::format("{:g}{}", static_cast<double>(nanos) / static_cast<double>(u.size),
                         u.name);
    }
  }
  return fmt::format("{}ns", nanos);
}

std::string FormatTimestamp(int64_t unix_nanos) {
  time_t secs = static_cast<time_t>(unix_nanos / kNanosPerSecond);
  tm utc{};
  gmtime_r(&secs, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     (unix_nanos % kNanosPerSecond) / kNanosPerMilli);
}

}  // namespace vigil
