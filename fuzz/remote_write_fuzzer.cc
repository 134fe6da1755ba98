// SPDX-License-Identifier: Apache-2.0
// Fuzzes the remote-write encoding (sinks/remote_write_encoding.h) both ways:
//  - round trip: a WriteRequest built from the input (up to 8 series of up to 6 labels and 8
//    samples; any bytes in names and values, any double bit pattern, any timestamp) is encoded,
//    decoded, and must equal what went in (values compared bit for bit, so NaNs, the staleness
//    marker and -0.0 must survive); the same for its snappy block;
//  - decoding: the raw input as a WriteRequest (what decodes re-encodes and decodes to the same
//    series) and as a snappy block (never larger than its cap).
// An empty label name or value is not encoded (proto3), yet decodes back to the same empty
// string, so empty strings are part of the round trip too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "sinks/remote_write_encoding.h"

namespace {

std::vector<vigil::RwTimeSeries> Build(vigil::fuzz::FuzzInput& in) {
  std::vector<vigil::RwTimeSeries> out(in.Byte() % 9);
  for (vigil::RwTimeSeries& ts : out) {
    const int labels = in.Byte() % 7;
    for (int i = 0; i < labels; ++i) {
      std::string name = in.String(32);
      ts.labels.emplace_back(std::move(name), in.String(32));
    }
    ts.samples.resize(in.Byte() % 9);
    for (vigil::RwSample& s : ts.samples) {
      s.value = in.Double();
      s.timestamp_ms = in.I64();
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);

  // Round trip of a request built from the input.
  vigil::fuzz::FuzzInput in(data, size);
  const std::vector<vigil::RwTimeSeries> built = Build(in);
  std::string encoded;
  vigil::EncodeWriteRequest(built, &encoded);
  auto decoded = vigil::DecodeWriteRequest(encoded);
  VIGIL_FUZZ_CHECK(decoded.ok());
  VIGIL_FUZZ_CHECK(*decoded == built);
  const std::string block = vigil::SnappyCompress(encoded);
  auto unblocked = vigil::SnappyUncompress(block, encoded.size());
  VIGIL_FUZZ_CHECK(unblocked.ok() && *unblocked == encoded);

  // The raw input as a request from a peer.
  if (auto peer = vigil::DecodeWriteRequest(raw); peer.ok()) {
    std::string again;
    vigil::EncodeWriteRequest(*peer, &again);
    auto redecoded = vigil::DecodeWriteRequest(again);
    VIGIL_FUZZ_CHECK(redecoded.ok());
    VIGIL_FUZZ_CHECK(*redecoded == *peer);
  }
  constexpr size_t kCap = 1 << 20;
  if (auto out = vigil::SnappyUncompress(raw, kCap); out.ok()) {
    VIGIL_FUZZ_CHECK(out->size() <= kCap);
  }
  return 0;
}
