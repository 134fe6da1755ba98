// SPDX-License-Identifier: Apache-2.0
// The Prometheus remote-write 1.0 wire format (prompb/remote.proto, prompb/types.proto):
//   WriteRequest { repeated TimeSeries timeseries = 1; }
//   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
//   Label        { string name = 1; string value = 2; }
//   Sample       { double value = 1; int64 timestamp = 2; }   // timestamp: Unix milliseconds
// and its snappy block compression. The encoder is hand-written: the message is four tiny types,
// it runs on every push, and this avoids generated code and a libprotobuf dependency. The decoder
// is the strict inverse, used by tests and fake receivers. Pure functions; thread-safe.
// Owner: the remote-write sink (sinks/remote_write_sink.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace vigil {

// The special NaN Prometheus uses as a staleness marker (value.StaleNaN).
inline constexpr uint64_t kStaleNaNBits = 0x7ff0000000000002ULL;
double StaleNaN();
bool IsStaleNaN(double value);

struct RwSample {
  double value = 0;
  int64_t timestamp_ms = 0;
  bool operator==(const RwSample& other) const;  // Bitwise on value (NaNs compare equal).
};

struct RwTimeSeries {
  // Name/value pairs in the order they are sent (the sink sorts them; see remote_write_labels.h).
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<RwSample> samples;
  bool operator==(const RwTimeSeries& other) const = default;
};

// Appends the protobuf encoding of WriteRequest{timeseries} to `*out`.
void EncodeWriteRequest(const std::vector<RwTimeSeries>& timeseries, std::string* out);

// Parses a WriteRequest. Unknown fields are skipped (forward compatible, as protobuf requires);
// truncated or malformed input is DataLoss.
StatusOr<std::vector<RwTimeSeries>> DecodeWriteRequest(std::string_view data);

// Snappy block format (not the framing format), as remote-write requires.
std::string SnappyCompress(std::string_view data);
// Refuses (ResourceExhausted) a block that claims to expand past `max_bytes`.
StatusOr<std::string> SnappyUncompress(std::string_view data, size_t max_bytes = 64 << 20);

}  // namespace vigil
