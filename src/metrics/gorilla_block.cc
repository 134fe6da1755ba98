// SPDX-License-Identifier: Apache-2.0
#include "metrics/gorilla_block.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace vigil {
namespace {

// Timestamp delta-of-delta buckets (nanoseconds): '0' = same interval, then 14-bit (±8 us),
// 24-bit (±8 ms), 32-bit (±2 s) signed payloads, and '1111' + 64 bits for anything else.
constexpr int kDodBits[] = {14, 24, 32};

// Value control codes:
//   '0'    value identical to the previous one
//   '10'   decimal delta at the current scale, then a delta bucket
//   '110'  XOR inside the previous window: the window's meaningful bits
//   '1110' XOR with a new window: 5 bits leading zeros, 6 bits length (64 -> 0), the bits
//   '1111' decimal delta at a new scale: 3 bits scale, then a delta bucket
// Delta buckets hold the zigzag of the integer difference: '0' + 8 bits, '10' + 16 bits,
// '110' + 24 bits, '111' + 6 bits (length - 1) + length bits.
constexpr int kMaxScale = 7;
constexpr double kPow10[kMaxScale + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7};
constexpr double kMaxExactInt = 9007199254740992.0;  // 2^53.

bool FitsSigned(int64_t v, int bits) {
  const int64_t lim = int64_t{1} << (bits - 1);
  return v >= -lim && v < lim;
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits == 64) {
    return static_cast<int64_t>(v);
  }
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

int BitWidth(uint64_t v) { return 64 - std::countl_zero(v); }

int DeltaBucketCost(uint64_t zz) {
  if (zz < (uint64_t{1} << 8)) {
    return 9;
  }
  if (zz < (uint64_t{1} << 16)) {
    return 18;
  }
  if (zz < (uint64_t{1} << 24)) {
    return 27;
  }
  return 9 + BitWidth(zz);
}

void WriteDeltaBucket(BitWriter& w, uint64_t zz) {
  if (zz < (uint64_t{1} << 8)) {
    w.WriteBits(0b0, 1);
    w.WriteBits(zz, 8);
  } else if (zz < (uint64_t{1} << 16)) {
    w.WriteBits(0b10, 2);
    w.WriteBits(zz, 16);
  } else if (zz < (uint64_t{1} << 24)) {
    w.WriteBits(0b110, 3);
    w.WriteBits(zz, 24);
  } else {
    const int n = BitWidth(zz);
    w.WriteBits(0b111, 3);
    w.WriteBits(static_cast<uint64_t>(n - 1), 6);
    w.WriteBits(zz, n);
  }
}

bool ReadDeltaBucket(BitReader& r, uint64_t* zz) {
  bool bit = false;
  int width = 0;
  if (!r.ReadBit(&bit)) {
    return false;
  }
  if (!bit) {
    width = 8;
  } else if (!r.ReadBit(&bit)) {
    return false;
  } else if (!bit) {
    width = 16;
  } else if (!r.ReadBit(&bit)) {
    return false;
  } else if (!bit) {
    width = 24;
  } else {
    uint64_t n = 0;
    if (!r.ReadBits(6, &n)) {
      return false;
    }
    width = static_cast<int>(n) + 1;
  }
  return r.ReadBits(width, zz);
}

// The integer value * 10^scale when `bits` is exactly that integer divided by 10^scale.
bool ToScaledInt(uint64_t bits, int scale, int64_t* out) {
  const double v = std::bit_cast<double>(bits);
  const double scaled = v * kPow10[scale];
  if (!std::isfinite(scaled) || std::fabs(scaled) >= kMaxExactInt) {
    return false;
  }
  const int64_t i = std::llround(scaled);
  if (std::bit_cast<uint64_t>(static_cast<double>(i) / kPow10[scale]) != bits) {
    return false;
  }
  *out = i;
  return true;
}

// What the decoder computes from the previous value; must match the encoder's arithmetic.
int64_t PrevScaledInt(uint64_t prev_bits, int scale) {
  return std::llround(std::bit_cast<double>(prev_bits) * kPow10[scale]);
}

// Zigzag of the scaled difference between prev and cur at `scale`, when both are exact decimals.
bool DecimalDelta(uint64_t prev_bits, uint64_t cur_bits, int scale, uint64_t* zz) {
  int64_t ip = 0;
  int64_t ic = 0;
  if (!ToScaledInt(prev_bits, scale, &ip) || !ToScaledInt(cur_bits, scale, &ic)) {
    return false;
  }
  *zz = ZigZag(ic - ip);  // Both below 2^53 in magnitude: no overflow.
  return true;
}

}  // namespace

void BitWriter::WriteBits(uint64_t value, int nbits) {
  while (nbits > 0) {
    const int used = static_cast<int>(bits_ & 7);
    if (used == 0) {
      buf_.push_back(0);
    }
    const int room = 8 - used;
    const int take = std::min(room, nbits);
    const uint64_t chunk = (value >> (nbits - take)) & ((uint64_t{1} << take) - 1);
    buf_.back() = static_cast<uint8_t>(buf_.back() | (chunk << (room - take)));
    nbits -= take;
    bits_ += static_cast<size_t>(take);
  }
}

std::vector<uint8_t> BitWriter::Release() {
  bits_ = 0;
  return std::move(buf_);
}

bool BitReader::ReadBits(int nbits, uint64_t* value) {
  if (pos_ + static_cast<size_t>(nbits) > data_.size() * 8) {
    return false;
  }
  uint64_t out = 0;
  while (nbits > 0) {
    const int used = static_cast<int>(pos_ & 7);
    const int room = 8 - used;
    const int take = std::min(room, nbits);
    const uint64_t byte = data_[pos_ >> 3];
    const uint64_t chunk = (byte >> (room - take)) & ((uint64_t{1} << take) - 1);
    out = (out << take) | chunk;
    nbits -= take;
    pos_ += static_cast<size_t>(take);
  }
  *value = out;
  return true;
}

bool BitReader::ReadBit(bool* bit) {
  uint64_t v = 0;
  if (!ReadBits(1, &v)) {
    return false;
  }
  *bit = v != 0;
  return true;
}

Status GorillaEncoder::Append(int64_t time_ns, double value) {
  if (count_ > 0 && time_ns <= prev_time_) {
    return InvalidArgumentError("gorilla: point time " + std::to_string(time_ns) +
                                " is not after " + std::to_string(prev_time_));
  }
  WriteTimestamp(time_ns);
  WriteValue(value);
  ++count_;
  return OkStatus();
}

void GorillaEncoder::WriteTimestamp(int64_t time_ns) {
  if (count_ == 0) {
    writer_.WriteBits(static_cast<uint64_t>(time_ns), 64);
    first_time_ = time_ns;
    prev_time_ = time_ns;
    prev_delta_ = 0;
    return;
  }
  // Unsigned arithmetic wraps instead of overflowing; the decoder mirrors it.
  const uint64_t delta = static_cast<uint64_t>(time_ns) - static_cast<uint64_t>(prev_time_);
  const int64_t dod = static_cast<int64_t>(delta - static_cast<uint64_t>(prev_delta_));
  if (dod == 0) {
    writer_.WriteBits(0b0, 1);
  } else if (FitsSigned(dod, kDodBits[0])) {
    writer_.WriteBits(0b10, 2);
    writer_.WriteBits(static_cast<uint64_t>(dod), kDodBits[0]);
  } else if (FitsSigned(dod, kDodBits[1])) {
    writer_.WriteBits(0b110, 3);
    writer_.WriteBits(static_cast<uint64_t>(dod), kDodBits[1]);
  } else if (FitsSigned(dod, kDodBits[2])) {
    writer_.WriteBits(0b1110, 4);
    writer_.WriteBits(static_cast<uint64_t>(dod), kDodBits[2]);
  } else {
    writer_.WriteBits(0b1111, 4);
    writer_.WriteBits(static_cast<uint64_t>(dod), 64);
  }
  prev_delta_ = static_cast<int64_t>(delta);
  prev_time_ = time_ns;
}

void GorillaEncoder::WriteValue(double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  GorillaValueState& s = state_;
  if (count_ == 0) {
    writer_.WriteBits(bits, 64);
    s = GorillaValueState{};
    s.prev_bits = bits;
    return;
  }
  const uint64_t x = bits ^ s.prev_bits;
  if (x == 0) {
    writer_.WriteBits(0b0, 1);
    return;
  }
  // Candidate encodings and their costs in bits; the cheapest wins.
  enum class Choice { kDecimal, kXorReuse, kXorNew, kDecimalNewScale } choice = Choice::kXorNew;
  const int lead = std::min(std::countl_zero(x), 31);
  const int trail = std::countr_zero(x);
  int best = 4 + 5 + 6 + (64 - lead - trail);
  if (s.leading >= 0 && lead >= s.leading && trail >= s.trailing &&
      3 + (64 - s.leading - s.trailing) <= best) {
    best = 3 + (64 - s.leading - s.trailing);
    choice = Choice::kXorReuse;
  }
  uint64_t zz = 0;
  uint64_t zz_new = 0;
  int new_scale = -1;
  if (DecimalDelta(s.prev_bits, bits, s.scale, &zz)) {
    if (2 + DeltaBucketCost(zz) <= best) {
      best = 2 + DeltaBucketCost(zz);
      choice = Choice::kDecimal;
    }
  } else {
    for (int scale = 0; scale <= kMaxScale; ++scale) {
      if (scale != s.scale && DecimalDelta(s.prev_bits, bits, scale, &zz_new)) {
        new_scale = scale;
        break;
      }
    }
    if (new_scale >= 0 && 7 + DeltaBucketCost(zz_new) < best) {
      choice = Choice::kDecimalNewScale;
    }
  }
  switch (choice) {
    case Choice::kDecimal:
      writer_.WriteBits(0b10, 2);
      WriteDeltaBucket(writer_, zz);
      break;
    case Choice::kXorReuse:
      writer_.WriteBits(0b110, 3);
      writer_.WriteBits(x >> s.trailing, 64 - s.leading - s.trailing);
      break;
    case Choice::kXorNew: {
      const int sig = 64 - lead - trail;
      writer_.WriteBits(0b1110, 4);
      writer_.WriteBits(static_cast<uint64_t>(lead), 5);
      writer_.WriteBits(static_cast<uint64_t>(sig & 63), 6);
      writer_.WriteBits(x >> trail, sig);
      s.leading = lead;
      s.trailing = trail;
      break;
    }
    case Choice::kDecimalNewScale:
      writer_.WriteBits(0b1111, 4);
      writer_.WriteBits(static_cast<uint64_t>(new_scale), 3);
      WriteDeltaBucket(writer_, zz_new);
      s.scale = new_scale;
      break;
  }
  s.prev_bits = bits;
}

GorillaBlock GorillaEncoder::Seal() {
  GorillaBlock block;
  block.first_time = first_time_;
  block.last_time = prev_time_;
  block.count = count_;
  const std::vector<uint8_t>& bytes = writer_.bytes();
  block.size = static_cast<uint32_t>(bytes.size());
  block.data = std::make_unique<uint8_t[]>(bytes.size());
  if (!bytes.empty()) {
    std::memcpy(block.data.get(), bytes.data(), bytes.size());
  }
  Reset();
  return block;
}

void GorillaEncoder::Reset() {
  writer_ = BitWriter();
  count_ = 0;
  first_time_ = 0;
  prev_time_ = 0;
  prev_delta_ = 0;
  state_ = GorillaValueState{};
}

size_t GorillaEncoder::heap_bytes() const { return HeapBytes(writer_.bytes().capacity()); }

bool GorillaDecoder::Fail() {
  status_ = DataLossError("gorilla: block truncated or corrupt at point " + std::to_string(index_) +
                          ", bit " + std::to_string(reader_.position()));
  left_ = 0;
  return false;
}

bool GorillaDecoder::Next(Point* point) {
  if (left_ == 0) {
    return false;
  }
  int64_t t = 0;
  double v = 0;
  if (!ReadTimestamp(&t) || !ReadValue(&v)) {
    return Fail();
  }
  point->time_ns = t;
  point->value = v;
  ++index_;
  --left_;
  return true;
}

bool GorillaDecoder::ReadTimestamp(int64_t* time_ns) {
  uint64_t raw = 0;
  if (index_ == 0) {
    if (!reader_.ReadBits(64, &raw)) {
      return false;
    }
    prev_time_ = static_cast<int64_t>(raw);
    prev_delta_ = 0;
    *time_ns = prev_time_;
    return true;
  }
  int code = 0;  // Number of leading 1 bits, 0..4.
  bool bit = true;
  while (code < 4) {
    if (!reader_.ReadBit(&bit)) {
      return false;
    }
    if (!bit) {
      break;
    }
    ++code;
  }
  int64_t dod = 0;
  if (code > 0) {
    const int width = code == 4 ? 64 : kDodBits[code - 1];
    if (!reader_.ReadBits(width, &raw)) {
      return false;
    }
    dod = SignExtend(raw, width);
  }
  const uint64_t delta = static_cast<uint64_t>(prev_delta_) + static_cast<uint64_t>(dod);
  prev_delta_ = static_cast<int64_t>(delta);
  prev_time_ = static_cast<int64_t>(static_cast<uint64_t>(prev_time_) + delta);
  *time_ns = prev_time_;
  return true;
}

bool GorillaDecoder::ReadValue(double* value) {
  GorillaValueState& s = state_;
  uint64_t raw = 0;
  if (index_ == 0) {
    if (!reader_.ReadBits(64, &raw)) {
      return false;
    }
    s = GorillaValueState{};
    s.prev_bits = raw;
    *value = std::bit_cast<double>(raw);
    return true;
  }
  int code = 0;  // Number of leading 1 bits, 0..4.
  bool bit = true;
  while (code < 4) {
    if (!reader_.ReadBit(&bit)) {
      return false;
    }
    if (!bit) {
      break;
    }
    ++code;
  }
  switch (code) {
    case 0:
      break;
    case 1:
    case 4: {
      if (code == 4) {
        if (!reader_.ReadBits(3, &raw)) {
          return false;
        }
        s.scale = static_cast<int>(raw);
      }
      uint64_t zz = 0;
      if (!ReadDeltaBucket(reader_, &zz)) {
        return false;
      }
      const int64_t cur = PrevScaledInt(s.prev_bits, s.scale) + UnZigZag(zz);
      s.prev_bits = std::bit_cast<uint64_t>(static_cast<double>(cur) / kPow10[s.scale]);
      break;
    }
    case 2: {
      if (s.leading < 0) {
        return false;  // Reuse before any window was set.
      }
      if (!reader_.ReadBits(64 - s.leading - s.trailing, &raw)) {
        return false;
      }
      s.prev_bits ^= raw << s.trailing;
      break;
    }
    case 3: {
      uint64_t lead = 0;
      uint64_t sig = 0;
      if (!reader_.ReadBits(5, &lead) || !reader_.ReadBits(6, &sig)) {
        return false;
      }
      if (sig == 0) {
        sig = 64;
      }
      if (lead + sig > 64) {
        return false;
      }
      if (!reader_.ReadBits(static_cast<int>(sig), &raw)) {
        return false;
      }
      s.leading = static_cast<int>(lead);
      s.trailing = static_cast<int>(64 - lead - sig);
      s.prev_bits ^= raw << s.trailing;
      break;
    }
    default:
      return false;
  }
  *value = std::bit_cast<double>(s.prev_bits);
  return true;
}

StatusOr<std::vector<Point>> DecodeBlock(std::span<const uint8_t> data, uint32_t count) {
  std::vector<Point> points;
  points.reserve(count);
  GorillaDecoder decoder(data, count);
  Point p;
  while (decoder.Next(&p)) {
    points.push_back(p);
  }
  if (!decoder.status().ok()) {
    return decoder.status();
  }
  return points;
}

}  // namespace vigil
