// SPDX-License-Identifier: Apache-2.0
// gzip in memory (zlib): pushed batches, uploaded traces and analyses, stored reports and the
// sinks' payloads all use these two, so every inflate is bounded the same way. Owner: base.
// Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

// gzip (RFC 1952) of `in` at the default level.
std::string Gzip(std::string_view in);

// Inflates a gzip (or zlib) body; more than `max_bytes` of output is ResourceExhausted, a corrupt
// or truncated body InvalidArgument.
StatusOr<std::string> Gunzip(std::string_view body, size_t max_bytes);

// True when `data` starts with the gzip magic bytes.
inline bool IsGzip(std::string_view data) {
  return data.size() >= 2 && data[0] == '\x1f' && data[1] == '\x8b';
}

}  // namespace vigil
