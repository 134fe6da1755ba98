// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_endpoint.h"

#include <cstdlib>
#include <string_view>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {

std::string DefaultFleetUrl() {
  const char* env = std::getenv("VIGIL_FLEET_URL");
  return env && *env ? env : "http://127.0.0.1:9480";
}

StatusOr<std::string> ReadFleetToken(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 16));
  std::string_view rest = text, line;
  while (NextLine(&rest, &line)) {
    line = Trim(line.substr(0, line.find('#')));
    if (!line.empty()) return std::string(SplitWhitespace(line).back());
  }
  return InvalidArgumentError("token file " + path + ": no token");
}

}  // namespace vigil
