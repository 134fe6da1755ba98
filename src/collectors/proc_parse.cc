// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_parse.h"

#include <unistd.h>

#include <string>

#include "base/strings.h"

namespace vigil {
namespace {

Status BadNumber(std::string_view field, std::string_view what) {
  return DataLossError(std::string(what) + ": bad number '" + SanitizeForLog(field, 40) + "'");
}

}  // namespace

StatusOr<uint64_t> ParseCounterField(std::string_view field, std::string_view what) {
  std::optional<uint64_t> v = ParseUint64(field);
  if (!v) {
    return BadNumber(field, what);
  }
  return *v;
}

StatusOr<double> ParseDecimalField(std::string_view field, std::string_view what) {
  std::optional<double> v = ParseDouble(field);
  if (!v || *v < 0) {
    return BadNumber(field, what);
  }
  return *v;
}

double HostUserHz() {
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<double>(hz) : kDefaultUserHz;
}

std::string_view ValueAfterKey(std::string_view field, std::string_view key) {
  if (field.size() > key.size() && field.starts_with(key) && field[key.size()] == '=') {
    return field.substr(key.size() + 1);
  }
  return {};
}

}  // namespace vigil
