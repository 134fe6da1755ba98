// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/event_decoder.h"

#include "trace/reader/event_decoder_backend.h"

namespace vigil::trace {

bool CpuHasAvx2() {
#if defined(__x86_64__) && defined(VIGIL_HAVE_HASWELL_DECODER)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul");
#else
  return false;
#endif
}

EventDecoder::EventDecoder(RankTrace* out) {
#if defined(VIGIL_HAVE_HASWELL_DECODER)
  if (CpuHasAvx2()) {
    impl_ = haswell_impl::MakeDecoder(out);
    return;
  }
#endif
  impl_ = generic_impl::MakeDecoder(out);
}

EventDecoder::~EventDecoder() = default;

Status EventDecoder::DecodeArray(const char* data, size_t len, size_t capacity, size_t* decoded) {
  return impl_->DecodeArray(data, len, capacity, decoded);
}

Status EventDecoder::DecodeObject(const char* data, size_t len, size_t capacity) {
  return impl_->DecodeObject(data, len, capacity);
}

void EventDecoder::DecodeMetadata(std::string_view key, std::string_view raw_json) {
  impl_->DecodeMetadata(key, raw_json);
}

}  // namespace vigil::trace
