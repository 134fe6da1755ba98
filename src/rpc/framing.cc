// SPDX-License-Identifier: Apache-2.0
#include "rpc/framing.h"

#include <algorithm>

#include <fmt/format.h>

namespace vigil {
namespace {

constexpr size_t kKeepCapacity = 64 << 10;  // An emptied buffer larger than this is freed.

void Empty(std::string* buffer) {
  if (buffer->capacity() > kKeepCapacity) {
    std::string().swap(*buffer);
  } else {
    buffer->clear();
  }
}

}  // namespace

StatusOr<std::string> EncodeFrame(std::string_view payload, size_t max_frame_bytes) {
  const size_t limit = std::min(max_frame_bytes, kMaxWireFrameBytes);
  if (payload.empty()) {
    return InvalidArgumentError("encode frame: empty payload");
  }
  if (payload.size() > limit) {
    return ResourceExhaustedError(fmt::format(
        "encode frame: payload of {} bytes exceeds the {} byte limit", payload.size(), limit));
  }
  const auto length = static_cast<uint32_t>(payload.size());
  std::string out;
  out.reserve(kFrameHeaderBytes + payload.size());
  for (int shift = 0; shift < 32; shift += 8) {
    out.push_back(static_cast<char>((length >> shift) & 0xff));
  }
  out.append(payload);
  return out;
}

int32_t DecodeFrameLength(const char* header) {
  uint32_t length = 0;
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) {
    length |= static_cast<uint32_t>(static_cast<unsigned char>(header[i])) << (8 * i);
  }
  return static_cast<int32_t>(length);
}

void FrameDecoder::Append(std::string_view bytes) {
  if (failed_) {
    return;
  }
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    Empty(&buffer_);
    consumed_ = 0;
  }
  const size_t need = buffer_.size() + bytes.size();
  if (need > buffer_.capacity()) {
    // Grow by a quarter, not the library's doubling, so what a budget counts is close to what
    // is held (a fresh string's reserve() allocates exactly what it is asked for).
    size_t want = std::max(need, buffer_.size() + buffer_.size() / 4);
    const size_t available = buffer_.size() - consumed_;
    if (available >= kFrameHeaderBytes) {  // Never beyond the end of the frame being read.
      const int32_t length = DecodeFrameLength(buffer_.data() + consumed_);
      if (length > 0 && static_cast<size_t>(length) <= max_frame_bytes_) {
        want = std::min(want, std::max(need, consumed_ + kFrameHeaderBytes + length));
      }
    }
    std::string grown;
    grown.reserve(want);
    grown.append(buffer_);
    buffer_.swap(grown);
  }
  buffer_.append(bytes);
}

StatusOr<std::optional<std::string>> FrameDecoder::Next() {
  if (failed_) {
    return FailedPreconditionError("frame decoder: stream already failed");
  }
  const size_t available = buffer_.size() - consumed_;
  if (available < kFrameHeaderBytes) {
    return std::optional<std::string>();
  }
  const int32_t length = DecodeFrameLength(buffer_.data() + consumed_);
  if (length <= 0) {
    failed_ = true;
    Empty(&buffer_);
    return InvalidArgumentError(fmt::format("invalid frame length {}", length));
  }
  if (static_cast<size_t>(length) > max_frame_bytes_) {
    failed_ = true;
    Empty(&buffer_);
    return ResourceExhaustedError(
        fmt::format("frame of {} bytes exceeds the {} byte limit", length, max_frame_bytes_));
  }
  if (available - kFrameHeaderBytes < static_cast<size_t>(length)) {
    return std::optional<std::string>();
  }
  std::string payload = buffer_.substr(consumed_ + kFrameHeaderBytes, length);
  consumed_ += kFrameHeaderBytes + length;
  if (consumed_ == buffer_.size()) {
    Empty(&buffer_);
    consumed_ = 0;
  } else if (consumed_ > (64 << 10)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return std::optional<std::string>(std::move(payload));
}

}  // namespace vigil
