// SPDX-License-Identifier: Apache-2.0
#include "base/http_authorization.h"

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {

std::string Base64Encode(std::string_view bytes) {
  // Written here: one header is all that needs it, not worth a library.
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                       static_cast<uint8_t>(bytes[i + 1]) << 8 | static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v =
        static_cast<uint8_t>(bytes[i]) << 16 | (two ? static_cast<uint8_t>(bytes[i + 1]) << 8 : 0);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

StatusOr<std::string> ParseAuthorization(std::string_view text, const std::string& path) {
  std::string_view rest = text, line;
  while (NextLine(&rest, &line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    const std::string_view scheme = line.substr(0, space);
    const std::string_view secret =
        space == std::string_view::npos ? std::string_view() : Trim(line.substr(space + 1));
    if (secret.empty()) break;
    if (scheme == "bearer" || scheme == "Bearer") return "Bearer " + std::string(secret);
    if ((scheme == "basic" || scheme == "Basic") && secret.find(':') != std::string_view::npos) {
      return "Basic " + Base64Encode(secret);
    }
    break;
  }
  return InvalidArgumentError(path + ": want one line \"bearer TOKEN\" or \"basic USER:PASSWORD\"");
}

StatusOr<std::string> ReadAuthorizationFile(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 16));
  return ParseAuthorization(text, path);
}

}  // namespace vigil
