// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the fuzz harnesses: FuzzInput splits one fuzz input into typed pieces (for
// harnesses that build structured values, such as the remote-write round trip), and
// VIGIL_FUZZ_CHECK states an invariant: when it does not hold the harness prints why and aborts,
// which libFuzzer and the replay driver both report as a crash with the input saved. Header-only
// so each harness stays one file; no state beyond the input being read.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#define VIGIL_FUZZ_CHECK(cond)                                                                \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace vigil::fuzz {

// Reads front to back; once the bytes run out every read yields zero or an empty string, so a
// short input still builds a (small) value.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(reinterpret_cast<const char*>(data), size) {}

  bool empty() const { return pos_ >= data_.size(); }

  uint8_t Byte() { return empty() ? 0 : static_cast<uint8_t>(data_[pos_++]); }
  bool Bool() { return (Byte() & 1) != 0; }

  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<uint64_t>(Byte()) << (8 * i);
    }
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  // Any bit pattern, NaNs and infinities included.
  double Double() {
    const uint64_t bits = U64();
    double d = 0;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  // A string of 0..max_len bytes whose length is the next byte (modulo max_len + 1).
  std::string String(size_t max_len) {
    const size_t want = Byte() % (max_len + 1);
    const size_t n = std::min(want, data_.size() - std::min(pos_, data_.size()));
    std::string out(data_.substr(std::min(pos_, data_.size()), n));
    pos_ += n;
    return out;
  }

  // Everything not read yet.
  std::string_view Rest() {
    std::string_view rest = data_.substr(std::min(pos_, data_.size()));
    pos_ = data_.size();
    return rest;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace vigil::fuzz
