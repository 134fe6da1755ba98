// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/json_skip.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vigil::trace {
namespace {

bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

#if defined(__SSE2__)

struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

// Bit i of each mask is set when byte i of the 64 matches. '{' and '[' differ only in bit 0x20,
// as do '}' and ']', so one compare finds each pair.
BlockMasks Classify(const char* p) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  BlockMasks m{0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(v, case_bit);
    const int shift = 16 * k;
    auto bits = [&](__m128i eq) {
      return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << shift;
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote));
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
    m.open |= bits(_mm_cmpeq_epi8(folded, open));
    m.close |= bits(_mm_cmpeq_epi8(folded, close));
  }
  return m;
}

// Characters preceded by an odd run of backslashes (escaped), carrying a run that ends a block
// into the next (simdjson's odd-backslash-sequence method).
uint64_t EscapedChars(uint64_t backslash, uint64_t* prev_odd_run) {
  if (backslash == 0) {
    const uint64_t escaped = *prev_odd_run;
    *prev_odd_run = 0;
    return escaped;
  }
  constexpr uint64_t kEven = 0x5555555555555555ULL;
  constexpr uint64_t kOdd = ~kEven;
  const uint64_t starts = backslash & ~(backslash << 1);
  const uint64_t even_start_mask = kEven ^ *prev_odd_run;
  const uint64_t even_starts = starts & even_start_mask;
  const uint64_t odd_starts = starts & ~even_start_mask;
  const uint64_t even_carries = backslash + even_starts;
  uint64_t odd_carries = 0;
  const bool ends_odd = __builtin_add_overflow(backslash, odd_starts, &odd_carries);
  odd_carries |= *prev_odd_run;
  *prev_odd_run = ends_odd ? 1 : 0;
  const uint64_t even_carry_ends = even_carries & ~backslash;
  const uint64_t odd_carry_ends = odd_carries & ~backslash;
  return (even_carry_ends & kOdd) | (odd_carry_ends & kEven);
}

// Bits from each opening quote up to (not including) its closing quote.
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

size_t SkipContainer(const char* d, size_t p, size_t end) {
  uint64_t prev_odd_run = 0;
  uint64_t in_string_carry = 0;  // all ones when the previous block ended inside a string
  int64_t depth = 0;
  for (size_t b = p; b < end; b += 64) {
    BlockMasks m = Classify(d + b);
    const size_t valid = end - b;
    const uint64_t live = valid >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid) - 1;
    const uint64_t quotes = m.quote & ~EscapedChars(m.backslash, &prev_odd_run);
    const uint64_t in_string = PrefixXor(quotes) ^ in_string_carry;
    in_string_carry = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    const uint64_t opens = m.open & ~in_string & live;
    const uint64_t closes = m.close & ~in_string & live;
    if (static_cast<int64_t>(__builtin_popcountll(closes)) < depth) {
      depth += __builtin_popcountll(opens) - __builtin_popcountll(closes);  // cannot end here
      continue;
    }
    for (uint64_t brackets = opens | closes; brackets != 0; brackets &= brackets - 1) {
      const uint64_t bit = brackets & (~brackets + 1);
      if ((opens & bit) != 0) {
        ++depth;
      } else if (--depth == 0) {
        return b + static_cast<size_t>(__builtin_ctzll(bit)) + 1;
      }
    }
  }
  return kNotFound;
}

#endif  // __SSE2__

}  // namespace

size_t SkipJsonValueSlow(const char* d, size_t p, size_t end) {
  int depth = 0;
  while (p < end) {
    const char c = d[p];
    if (c == '"') {
      size_t q = p + 1;
      while (true) {
        const void* hit = std::memchr(d + q, '"', end - q);
        if (hit == nullptr) return kNotFound;
        const size_t pos = static_cast<size_t>(static_cast<const char*>(hit) - d);
        size_t backslashes = 0;
        while (pos - backslashes > q && d[pos - backslashes - 1] == '\\') ++backslashes;
        q = pos + 1;
        if (backslashes % 2 == 0) break;
      }
      p = q;
      if (depth == 0) return p;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return p;  // end of the enclosing container: a scalar ended
      if (--depth == 0) return p + 1;
    } else if (depth == 0 && (c == ',' || IsWs(c))) {
      return p;  // end of a scalar
    }
    ++p;
  }
  return kNotFound;
}

size_t SkipJsonValue(const char* d, size_t p, size_t end) {
#if defined(__SSE2__)
  if (p < end && (d[p] == '{' || d[p] == '[')) return SkipContainer(d, p, end);
#endif
  return SkipJsonValueSlow(d, p, end);
}

}  // namespace vigil::trace
