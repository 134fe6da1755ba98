// SPDX-License-Identifier: Apache-2.0
// Turns batches of Kineto trace events (JSON text) into rows of a RankTrace with simdjson's
// On-Demand API: no DOM is built, only the fields the analyses use are read. One decoder per
// thread (it owns a simdjson parser).
// Owner: trace.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

class DecoderBackend;

// True when the AVX2 decoder is compiled in and this CPU can run it.
bool CpuHasAvx2();

class EventDecoder {
 public:
  explicit EventDecoder(RankTrace* out);
  ~EventDecoder();
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // `data[0..len)` is a JSON array of events; `capacity - len` bytes after it must be readable
  // (simdjson padding). On a malformed batch, returns an error and appends nothing from the
  // element that failed onward.
  Status DecodeArray(const char* data, size_t len, size_t capacity, size_t* decoded);
  // One event object, same padding rule.
  Status DecodeObject(const char* data, size_t len, size_t capacity);
  // Parses the small top-level values (distributedInfo, deviceProperties, ...).
  void DecodeMetadata(std::string_view key, std::string_view raw_json);

 private:
  std::unique_ptr<DecoderBackend> impl_;
};

}  // namespace vigil::trace
