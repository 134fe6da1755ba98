// SPDX-License-Identifier: Apache-2.0
// Finds where a JSON value ends without parsing it: the reader cuts the traceEvents array into
// batches at element boundaries before simdjson parses each batch, and a byte-at-a-time scan of
// every event was a third of the reader's time. Objects and arrays are scanned 64 bytes at a time
// with bitmasks (quotes, backslashes, brackets; string interiors by a prefix XOR of the quotes),
// as simdjson's first stage does. Owner: trace. Pure functions.
#pragma once

#include <cstddef>

namespace vigil::trace {

// Bytes readable past `end` that SkipJsonValue may look at (their values do not matter).
inline constexpr size_t kJsonSkipPadding = 64;

// The position just after the JSON value that starts at d[p] (p at its first byte), or
// kNotFound when [p, end) holds only part of it. d[end, end + kJsonSkipPadding) must be
// readable. A scalar ends at the first ',', '}', ']' or whitespace after it.
inline constexpr size_t kNotFound = static_cast<size_t>(-1);
size_t SkipJsonValue(const char* d, size_t p, size_t end);

// The same, one byte at a time: the reference the tests hold SkipJsonValue to.
size_t SkipJsonValueSlow(const char* d, size_t p, size_t end);

}  // namespace vigil::trace
