// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_encoding.h"

#include <bit>
#include <cstring>

#include <snappy.h>

namespace vigil {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

constexpr uint32_t Tag(uint32_t field, uint32_t wire_type) { return (field << 3) | wire_type; }

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

// Size of a length-delimited field (tag + length + payload) holding `len` bytes. Tags of
// fields 1 and 2 always fit in one byte.
size_t LenFieldSize(size_t len) { return 1 + VarintSize(len) + len; }

void PutLenField(uint32_t field, std::string_view bytes, std::string* out) {
  out->push_back(static_cast<char>(Tag(field, kLengthDelimited)));
  PutVarint(bytes.size(), out);
  out->append(bytes);
}

size_t LabelSize(const std::pair<std::string, std::string>& label) {
  // proto3 omits empty strings; a valid series never has an empty name or value, but the
  // encoding stays correct if one slips through.
  size_t n = 0;
  if (!label.first.empty()) {
    n += LenFieldSize(label.first.size());
  }
  if (!label.second.empty()) {
    n += LenFieldSize(label.second.size());
  }
  return n;
}

// Sample: field 1 fixed64 double, field 2 varint int64. Both always written (valid protobuf;
// a zero timestamp or value costs a few bytes and keeps the encoder branch-free).
size_t SampleSize(const RwSample& s) {
  return 1 + 8 + 1 + VarintSize(static_cast<uint64_t>(s.timestamp_ms));
}

size_t SeriesSize(const RwTimeSeries& ts) {
  size_t n = 0;
  for (const auto& label : ts.labels) {
    n += LenFieldSize(LabelSize(label));
  }
  for (const RwSample& s : ts.samples) {
    n += LenFieldSize(SampleSize(s));
  }
  return n;
}

// A bounds-checked reader over protobuf bytes.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) {
        return false;
      }
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        return true;
      }
    }
    return false;
  }
  bool Fixed(size_t n, uint64_t* v) {
    if (data_.size() - pos_ < n) {
      return false;
    }
    *v = 0;
    for (size_t i = 0; i < n; ++i) {
      *v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t len = 0;
    if (!Varint(&len) || len > data_.size() - pos_) {
      return false;
    }
    *out = data_.substr(pos_, len);
    pos_ += len;
    return true;
  }
  // Reads one tag; false at a malformed tag.
  bool Tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag = 0;
    if (!Varint(&tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
      return false;
    }
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    return true;
  }
  bool Skip(uint32_t wire_type) {
    uint64_t ignored = 0;
    std::string_view ignored_bytes;
    switch (wire_type) {
      case kVarint:
        return Varint(&ignored);
      case kFixed64:
        return Fixed(8, &ignored);
      case kLengthDelimited:
        return Bytes(&ignored_bytes);
      case kFixed32:
        return Fixed(4, &ignored);
      default:
        return false;  // Groups (3, 4) are not used by remote-write.
    }
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

Status Malformed(std::string_view what) {
  return DataLossError("decode write request: malformed " + std::string(what));
}

Status DecodeLabel(std::string_view data, std::pair<std::string, std::string>* label) {
  Reader r(data);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    std::string_view bytes;
    if (!r.Tag(&field, &wire)) {
      return Malformed("label tag");
    }
    if ((field == 1 || field == 2) && wire == kLengthDelimited) {
      if (!r.Bytes(&bytes)) {
        return Malformed("label string");
      }
      (field == 1 ? label->first : label->second).assign(bytes);
    } else if (!r.Skip(wire)) {
      return Malformed("label field");
    }
  }
  return OkStatus();
}

Status DecodeSample(std::string_view data, RwSample* sample) {
  Reader r(data);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    uint64_t v = 0;
    if (!r.Tag(&field, &wire)) {
      return Malformed("sample tag");
    }
    if (field == 1 && wire == kFixed64) {
      if (!r.Fixed(8, &v)) {
        return Malformed("sample value");
      }
      sample->value = std::bit_cast<double>(v);
    } else if (field == 2 && wire == kVarint) {
      if (!r.Varint(&v)) {
        return Malformed("sample timestamp");
      }
      sample->timestamp_ms = static_cast<int64_t>(v);
    } else if (!r.Skip(wire)) {
      return Malformed("sample field");
    }
  }
  return OkStatus();
}

Status DecodeSeries(std::string_view data, RwTimeSeries* ts) {
  Reader r(data);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    std::string_view bytes;
    if (!r.Tag(&field, &wire)) {
      return Malformed("timeseries tag");
    }
    if ((field == 1 || field == 2) && wire == kLengthDelimited) {
      if (!r.Bytes(&bytes)) {
        return Malformed("timeseries field");
      }
      if (field == 1) {
        VIGIL_RETURN_IF_ERROR(DecodeLabel(bytes, &ts->labels.emplace_back()));
      } else {
        VIGIL_RETURN_IF_ERROR(DecodeSample(bytes, &ts->samples.emplace_back()));
      }
    } else if (!r.Skip(wire)) {
      return Malformed("timeseries field");
    }
  }
  return OkStatus();
}

}  // namespace

double StaleNaN() { return std::bit_cast<double>(kStaleNaNBits); }

bool IsStaleNaN(double value) { return std::bit_cast<uint64_t>(value) == kStaleNaNBits; }

bool RwSample::operator==(const RwSample& other) const {
  return std::bit_cast<uint64_t>(value) == std::bit_cast<uint64_t>(other.value) &&
         timestamp_ms == other.timestamp_ms;
}

void EncodeWriteRequest(const std::vector<RwTimeSeries>& timeseries, std::string* out) {
  size_t total = 0;
  for (const RwTimeSeries& ts : timeseries) {
    total += LenFieldSize(SeriesSize(ts));
  }
  out->reserve(out->size() + total);
  for (const RwTimeSeries& ts : timeseries) {
    out->push_back(static_cast<char>(Tag(1, kLengthDelimited)));
    PutVarint(SeriesSize(ts), out);
    for (const auto& label : ts.labels) {
      out->push_back(static_cast<char>(Tag(1, kLengthDelimited)));
      PutVarint(LabelSize(label), out);
      if (!label.first.empty()) {
        PutLenField(1, label.first, out);
      }
      if (!label.second.empty()) {
        PutLenField(2, label.second, out);
      }
    }
    for (const RwSample& s : ts.samples) {
      out->push_back(static_cast<char>(Tag(2, kLengthDelimited)));
      PutVarint(SampleSize(s), out);
      out->push_back(static_cast<char>(Tag(1, kFixed64)));
      PutFixed64(std::bit_cast<uint64_t>(s.value), out);
      out->push_back(static_cast<char>(Tag(2, kVarint)));
      PutVarint(static_cast<uint64_t>(s.timestamp_ms), out);
    }
  }
}

StatusOr<std::vector<RwTimeSeries>> DecodeWriteRequest(std::string_view data) {
  std::vector<RwTimeSeries> out;
  Reader r(data);
  while (!r.done()) {
    uint32_t field = 0, wire = 0;
    std::string_view bytes;
    if (!r.Tag(&field, &wire)) {
      return Malformed("write request tag");
    }
    if (field == 1 && wire == kLengthDelimited) {
      if (!r.Bytes(&bytes)) {
        return Malformed("timeseries length");
      }
      VIGIL_RETURN_IF_ERROR(DecodeSeries(bytes, &out.emplace_back()));
    } else if (!r.Skip(wire)) {
      return Malformed("write request field");
    }
  }
  return out;
}

std::string SnappyCompress(std::string_view data) {
  std::string out;
  snappy::Compress(data.data(), data.size(), &out);
  return out;
}

StatusOr<std::string> SnappyUncompress(std::string_view data, size_t max_bytes) {
  size_t length = 0;
  if (!snappy::GetUncompressedLength(data.data(), data.size(), &length)) {
    return DataLossError("snappy: corrupt block header");
  }
  if (length > max_bytes) {
    return ResourceExhaustedError("snappy: block of " + std::to_string(length) +
                                  " bytes exceeds the limit of " + std::to_string(max_bytes));
  }
  std::string out;
  if (!snappy::Uncompress(data.data(), data.size(), &out)) {
    return DataLossError("snappy: corrupt block");
  }
  return out;
}

}  // namespace vigil
