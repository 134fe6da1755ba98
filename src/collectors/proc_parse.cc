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

double HostPageSize() {
  const long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<double>(size) : 4096.0;
}

Status ParseNamedCounters(std::string_view text, std::span<const std::string_view> names,
                          std::span<uint64_t> values, uint64_t* found, std::string_view what) {
  *found = 0;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view name;
    if (!NextField(&line, &name)) {
      continue;
    }
    for (size_t i = 0; i < names.size() && i < values.size() && i < 64; ++i) {
      if (names[i] != name) {
        continue;
      }
      std::string_view value;
      if (!NextField(&line, &value)) {
        return DataLossError(std::string(what) + ": no value for " + std::string(name));
      }
      VIGIL_ASSIGN_OR_RETURN(values[i], ParseCounterField(value, what));
      *found |= uint64_t{1} << i;
      break;
    }
  }
  return OkStatus();
}

Status ParseSnmpFields(std::string_view text, std::string_view section,
                       std::span<const std::string_view> names, std::span<int64_t> values,
                       uint64_t* found) {
  *found = 0;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view tag;
    std::string_view header = line;
    if (!NextField(&header, &tag) || tag.size() != section.size() + 1 ||
        !tag.starts_with(section) || tag.back() != ':') {
      continue;
    }
    std::string_view values_line;
    std::string_view value_tag;
    if (!NextLine(&text, &values_line) || !NextField(&values_line, &value_tag) ||
        value_tag != tag) {
      return DataLossError(std::string(section) + ": header line without a value line");
    }
    std::string_view name;
    std::string_view value;
    while (NextField(&header, &name)) {
      if (!NextField(&values_line, &value)) {
        return DataLossError(std::string(section) + ": fewer values than names");
      }
      for (size_t i = 0; i < names.size() && i < values.size() && i < 64; ++i) {
        if (names[i] != name) {
          continue;
        }
        std::optional<int64_t> v = ParseInt64(value);  // Tcp MaxConn is -1.
        if (!v) {
          return DataLossError(std::string(section) + ": bad number '" + SanitizeForLog(value, 40) +
                               "' for " + std::string(name));
        }
        values[i] = *v;
        *found |= uint64_t{1} << i;
        break;
      }
    }
    return OkStatus();
  }
  return OkStatus();
}

std::string_view ValueAfterKey(std::string_view field, std::string_view key) {
  if (field.size() > key.size() && field.starts_with(key) && field[key.size()] == '=') {
    return field.substr(key.size() + 1);
  }
  return {};
}

}  // namespace vigil
