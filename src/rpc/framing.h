// SPDX-License-Identifier: Apache-2.0
// Wire framing of the control RPC, compatible with Dynolog's SimpleJsonServer and `dyno` CLI:
// each message is a 4-byte signed length (int32, little-endian, which is what Dynolog reads as a
// native int on x86) followed by that many bytes of JSON text. The decoder never allocates for a
// length it has not validated, so a hostile "2 GiB" prefix costs nothing. Value types; a
// FrameDecoder belongs to one connection and is not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

inline constexpr size_t kFrameHeaderBytes = 4;
inline constexpr size_t kDefaultMaxFrameBytes = 4 << 20;  // What the server accepts by default.
inline constexpr size_t kMaxWireFrameBytes = 0x7fffffff;  // The int32 length's ceiling.

// Returns header + payload. InvalidArgument when the payload is empty (Dynolog rejects length 0)
// and ResourceExhausted when it is longer than `max_frame_bytes` (capped at kMaxWireFrameBytes).
StatusOr<std::string> EncodeFrame(std::string_view payload,
                                  size_t max_frame_bytes = kMaxWireFrameBytes);

// Reads the little-endian int32 length from 4 header bytes.
int32_t DecodeFrameLength(const char* header);

// Incremental decoder: Append() bytes as they arrive, then call Next() until it yields nothing.
class FrameDecoder {
 public:
  explicit FrameDecoder(size_t max_frame_bytes = kDefaultMaxFrameBytes)
      : max_frame_bytes_(max_frame_bytes) {}

  // Buffers bytes. After an error the decoder stays failed and ignores further input.
  void Append(std::string_view bytes);
  // The next complete payload, nullopt when more bytes are needed, or an error for a bad length:
  // InvalidArgument for a length <= 0, ResourceExhausted for one above max_frame_bytes. The error
  // is reported as soon as the header is complete, before any payload is buffered.
  StatusOr<std::optional<std::string>> Next();

  // True while part of a frame is buffered (a connection closing now would lose it).
  bool mid_frame() const { return buffer_.size() > consumed_; }
  bool failed() const { return failed_; }
  // Heap bytes held (what a budget of buffered bytes counts).
  size_t footprint() const { return buffer_.capacity(); }

 private:
  size_t max_frame_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;  // Bytes at the front of buffer_ already handed out.
  bool failed_ = false;
};

}  // namespace vigil
