// SPDX-License-Identifier: Apache-2.0
// Gorilla-style compression of (time, value) points, as in Facebook's Gorilla paper (VLDB 2015)
// and Prometheus' XOR chunks: timestamps as delta-of-delta in variable-length buckets, values
// XOR-encoded against the previous double with a leading/trailing-zero window. One extension:
// values that are exact decimals (ticks/100, kB*1024, 0.52 parsed from text) may instead be coded
// as the integer difference of value*10^scale, whichever is shorter; identical values cost 1 bit.
// A GorillaEncoder builds the open block; Seal() turns it into an immutable GorillaBlock.
// Not thread-safe: the owner (SeriesHistory, under the store's lock) serializes access.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "metrics/point.h"

namespace vigil {

// Bytes a heap allocation of `n` bytes really occupies with glibc malloc (8-byte header, 16-byte
// granularity, 32-byte minimum chunk); 0 for no allocation.
inline size_t HeapBytes(size_t n) {
  if (n == 0) {
    return 0;
  }
  size_t chunk = (n + 8 + 15) & ~static_cast<size_t>(15);
  return chunk < 32 ? 32 : chunk;
}

// Appends bits most-significant first to a growing byte buffer.
class BitWriter {
 public:
  // Writes the low `nbits` (0..64) bits of `value`.
  void WriteBits(uint64_t value, int nbits);
  void WriteBit(bool bit) { WriteBits(bit ? 1 : 0, 1); }
  size_t bit_count() const { return bits_; }
  const std::vector<uint8_t>& bytes() const { return buf_; }
  std::vector<uint8_t> Release();

 private:
  std::vector<uint8_t> buf_;
  size_t bits_ = 0;
};

// Reads bits written by BitWriter. Reading past the end fails instead of returning garbage.
class BitReader {
 public:
  explicit BitReader(std::span<const uint8_t> data) : data_(data) {}
  // Reads `nbits` (0..64) bits into *value; false when fewer remain.
  bool ReadBits(int nbits, uint64_t* value);
  bool ReadBit(bool* bit);
  size_t position() const { return pos_; }

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;  // In bits.
};

// A sealed, immutable block of compressed points.
struct GorillaBlock {
  int64_t first_time = 0;
  int64_t last_time = 0;
  uint32_t count = 0;
  uint32_t size = 0;  // Bytes in data.
  std::unique_ptr<uint8_t[]> data;

  std::span<const uint8_t> bytes() const { return {data.get(), size}; }
  // Heap bytes this block owns (not counting the struct itself).
  size_t heap_bytes() const { return HeapBytes(size); }
};

// Decoder state shared by GorillaEncoder (to predict) and GorillaDecoder (to reconstruct).
struct GorillaValueState {
  uint64_t prev_bits = 0;  // Previous value's IEEE-754 bits.
  int leading = -1;        // Current XOR window; -1 = none yet.
  int trailing = 0;
  int scale = 0;  // Current decimal scale (value * 10^scale is an integer).
};

// Builds the open block. Points must arrive in strictly increasing time.
class GorillaEncoder {
 public:
  // InvalidArgument when time_ns is not after the previous point's (the point is not stored).
  Status Append(int64_t time_ns, double value);
  // Moves the open block out as a sealed block and resets the encoder.
  GorillaBlock Seal();
  void Reset();

  uint32_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  int64_t first_time() const { return first_time_; }
  int64_t last_time() const { return prev_time_; }
  std::span<const uint8_t> bytes() const { return writer_.bytes(); }
  size_t bit_count() const { return writer_.bit_count(); }
  // Heap bytes held by the open buffer (capacity, not size).
  size_t heap_bytes() const;

 private:
  void WriteTimestamp(int64_t time_ns);
  void WriteValue(double value);

  BitWriter writer_;
  uint32_t count_ = 0;
  int64_t first_time_ = 0;
  int64_t prev_time_ = 0;
  int64_t prev_delta_ = 0;
  GorillaValueState state_;
};

// Iterates the points of a block (sealed or open).
class GorillaDecoder {
 public:
  GorillaDecoder(std::span<const uint8_t> data, uint32_t count) : reader_(data), left_(count) {}
  // Decodes the next point; false at the end or on corrupt data (then status() says so).
  bool Next(Point* point);
  const Status& status() const { return status_; }

 private:
  bool Fail();
  bool ReadTimestamp(int64_t* time_ns);
  bool ReadValue(double* value);

  BitReader reader_;
  uint32_t left_;
  uint32_t index_ = 0;
  int64_t prev_time_ = 0;
  int64_t prev_delta_ = 0;
  GorillaValueState state_;
  Status status_;
};

// Decodes every point of a block; DataLoss on corrupt data.
StatusOr<std::vector<Point>> DecodeBlock(std::span<const uint8_t> data, uint32_t count);

}  // namespace vigil
