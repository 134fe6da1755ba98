// SPDX-License-Identifier: Apache-2.0
#include "base/log_text.h"

#include <fmt/format.h>

namespace vigil {
namespace {

void AppendHexEscape(unsigned char c, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out += "\\x";
  *out += kHex[c >> 4];
  *out += kHex[c & 0xf];
}

}  // namespace

std::string EscapeLogText(std::string_view message, bool json) {
  std::string out;
  out.reserve(message.size());
  for (char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      if (json) {
        out += fmt::format("\\u{:04x}", c);
      } else {
        AppendHexEscape(c, &out);
      }
    } else if (json && (c == '"' || c == '\\')) {
      out += '\\';
      out += ch;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace vigil
