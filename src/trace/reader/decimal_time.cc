// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/decimal_time.h"

#include <charconv>
#include <cmath>
#include <string>

namespace vigil::trace {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool ParseViaDouble(std::string_view text, int64_t* ns, bool* had_fraction) {
  std::string copy(text);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || !std::isfinite(v)) return false;
  // A double has 53 significant bits and 1000 needs 10: the product is exact in long double.
  long double scaled = static_cast<long double>(v) * 1000.0L;
  if (std::fabs(scaled) > 9.2e18L) return false;
  *ns = std::llroundl(scaled);
  *had_fraction = *ns % 1000 != 0;
  return true;
}

}  // namespace

bool ParseMicrosToNanos(std::string_view text, int64_t* ns, bool* had_fraction) {
  size_t i = 0;
  const size_t n = text.size();
  bool negative = false;
  if (i < n && text[i] == '-') {
    negative = true;
    ++i;
  }
  if (i >= n || !IsDigit(text[i])) return false;
  // More than 9.2e15 microseconds would overflow int64 nanoseconds; use a double there.
  uint64_t whole = 0;
  size_t int_digits = 0;
  while (i < n && IsDigit(text[i])) {
    whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
    ++i;
    if (++int_digits > 16) return ParseViaDouble(text, ns, had_fraction);
  }
  uint64_t frac = 0;  // nanoseconds
  bool fraction_nonzero = false;
  bool round_up = false;
  if (i < n && text[i] == '.') {
    ++i;
    size_t digits = 0;
    while (i < n && IsDigit(text[i])) {
      int d = text[i] - '0';
      if (d != 0) fraction_nonzero = true;
      if (digits < 3) {
        frac = frac * 10 + static_cast<uint64_t>(d);
      } else if (digits == 3) {
        round_up = d >= 5;
      }
      ++digits;
      ++i;
    }
    if (digits == 0) return false;
    for (size_t k = digits; k < 3; ++k) frac *= 10;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) return ParseViaDouble(text, ns, had_fraction);
  if (whole > 9'000'000'000'000'000ULL) return ParseViaDouble(text, ns, had_fraction);
  if (i != n) return false;
  uint64_t total = whole * 1000 + frac + (round_up ? 1 : 0);
  *ns = negative ? -static_cast<int64_t>(total) : static_cast<int64_t>(total);
  *had_fraction = fraction_nonzero;
  return true;
}

bool ParseIntegerToken(std::string_view text, int64_t* value) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *value);
  if (ec != std::errc()) {
    // Values above INT64_MAX (uint64 ids) wrap to keep their identity.
    uint64_t u = 0;
    auto [uptr, uec] = std::from_chars(begin, end, u);
    if (uec != std::errc() || uptr != end) return false;
    *value = static_cast<int64_t>(u);
    return true;
  }
  if (ptr == end) return true;
  // "12.0" style.
  if (*ptr == '.') {
    for (const char* p = ptr + 1; p < end; ++p) {
      if (*p != '0') return false;
    }
    return true;
  }
  return false;
}

}  // namespace vigil::trace
