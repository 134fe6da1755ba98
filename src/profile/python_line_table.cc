// SPDX-License-Identifier: Apache-2.0
#include "profile/python_line_table.h"

#include <cstddef>
#include <cstdint>

namespace vigil {
namespace {

struct Reader {
  std::string_view data;
  size_t pos = 0;
  bool Done() const { return pos >= data.size(); }
  uint8_t Byte() { return Done() ? 0 : static_cast<uint8_t>(data[pos++]); }
  // Continuation bit 0x40, 6 payload bits per byte, least significant first.
  uint32_t Varint() {
    uint32_t value = 0;
    int shift = 0;
    while (!Done() && shift < 32) {
      const uint8_t b = Byte();
      value |= static_cast<uint32_t>(b & 0x3f) << shift;
      shift += 6;
      if ((b & 0x40) == 0) {
        break;
      }
    }
    return value;
  }
  int Svarint() {
    const uint32_t v = Varint();
    return (v & 1) != 0 ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
  }
};

}  // namespace

int PythonLineOfCodeUnit(std::string_view linetable, int first_line, int index) {
  Reader r{linetable};
  int line = first_line;
  int unit = 0;
  while (!r.Done()) {
    const uint8_t first = r.Byte();
    if ((first & 0x80) == 0) {
      continue;  // Not an entry start: resynchronise on the next one.
    }
    const int code = (first >> 3) & 0x0f;
    const int length = (first & 0x07) + 1;
    bool no_location = false;
    switch (code) {
      case 15:
        no_location = true;
        break;
      case 14:
        line += r.Svarint();
        r.Varint();  // End line delta.
        r.Varint();  // Column + 1.
        r.Varint();  // End column + 1.
        break;
      case 13:
        line += r.Svarint();
        break;
      case 10:
      case 11:
      case 12:
        line += code - 10;
        r.Byte();
        r.Byte();
        break;
      default:  // 0..9: short form, same line.
        r.Byte();
        break;
    }
    if (index < unit + length) {
      return no_location ? -1 : line;
    }
    unit += length;
  }
  return line;
}

int PythonLineOf310Table(std::string_view linetable, int first_line, int offset) {
  int line = first_line;
  int end = 0;
  for (size_t i = 0; i + 1 < linetable.size(); i += 2) {
    const int start = end;
    end += static_cast<uint8_t>(linetable[i]);
    const int delta = static_cast<int8_t>(linetable[i + 1]);
    if (delta != -128) {
      line += delta;
    }
    if (offset >= start && offset < end) {
      return delta == -128 ? -1 : line;
    }
  }
  return line;
}

int PythonLineOfLnotab(std::string_view lnotab, int first_line, int offset) {
  int line = first_line;
  int address = 0;
  for (size_t i = 0; i + 1 < lnotab.size(); i += 2) {
    address += static_cast<uint8_t>(lnotab[i]);
    if (address > offset) {
      break;
    }
    line += static_cast<int8_t>(lnotab[i + 1]);
  }
  return line;
}

}  // namespace vigil
