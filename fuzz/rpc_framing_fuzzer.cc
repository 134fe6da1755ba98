// SPDX-License-Identifier: Apache-2.0
// Fuzzes the control RPC's wire framing (rpc/framing.h) the way a connection feeds it: the input
// arrives in chunks whose sizes come from the input itself, and every payload the decoder hands
// out must be non-empty, within the frame limit, and re-encode to the bytes it came from.
// Invariants: a failed decoder stays failed; bytes buffered never exceed what was appended.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_input.h"
#include "rpc/framing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using vigil::FrameDecoder;
  vigil::fuzz::FuzzInput in(data, size);
  // A small limit reaches the ResourceExhausted path with small inputs; the default is 4 MiB.
  const size_t max_frame = (in.Byte() & 1) != 0 ? 64 : vigil::kDefaultMaxFrameBytes;
  const std::string_view stream = in.Rest();

  FrameDecoder decoder(max_frame);
  std::string reassembled;  // Header + payload of every frame handed out, in order.
  size_t pos = 0;
  size_t chunk = 1;
  while (pos < stream.size()) {
    const size_t n = std::min(chunk, stream.size() - pos);
    decoder.Append(stream.substr(pos, n));
    pos += n;
    chunk = 1 + static_cast<uint8_t>(stream[pos - 1]) % 17;  // Next chunk size from the data.
    for (;;) {
      auto next = decoder.Next();
      if (!next.ok()) {
        VIGIL_FUZZ_CHECK(decoder.failed());
        auto again = decoder.Next();
        VIGIL_FUZZ_CHECK(!again.ok() || !again->has_value());
        break;
      }
      if (!next->has_value()) {
        break;
      }
      const std::string& payload = **next;
      VIGIL_FUZZ_CHECK(!payload.empty());
      VIGIL_FUZZ_CHECK(payload.size() <= max_frame);
      auto frame = vigil::EncodeFrame(payload, max_frame);
      VIGIL_FUZZ_CHECK(frame.ok());
      VIGIL_FUZZ_CHECK(frame->size() == vigil::kFrameHeaderBytes + payload.size());
      VIGIL_FUZZ_CHECK(static_cast<size_t>(vigil::DecodeFrameLength(frame->data())) ==
                       payload.size());
      reassembled += *frame;
    }
    if (decoder.failed()) {
      break;
    }
  }
  // Every frame handed out is exactly the bytes that carried it, in order.
  VIGIL_FUZZ_CHECK(stream.substr(0, reassembled.size()) == reassembled);
  return 0;
}
