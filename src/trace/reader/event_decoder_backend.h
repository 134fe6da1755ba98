// SPDX-License-Identifier: Apache-2.0
// The interface between EventDecoder and its two compiled variants (generic and AVX2), chosen at
// run time from the CPU's features. Internal to the reader.
// Owner: trace.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

class DecoderBackend {
 public:
  virtual ~DecoderBackend() = default;
  virtual Status DecodeArray(const char* data, size_t len, size_t capacity, size_t* decoded) = 0;
  virtual Status DecodeObject(const char* data, size_t len, size_t capacity) = 0;
  virtual void DecodeMetadata(std::string_view key, std::string_view raw_json) = 0;
};

namespace generic_impl {
std::unique_ptr<DecoderBackend> MakeDecoder(RankTrace* out);
}
namespace haswell_impl {
std::unique_ptr<DecoderBackend> MakeDecoder(RankTrace* out);
}

}  // namespace vigil::trace
