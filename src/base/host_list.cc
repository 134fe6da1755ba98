// SPDX-License-Identifier: Apache-2.0
#include "base/host_list.h"

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

// Splits on commas outside brackets.
StatusOr<std::vector<std::string_view>> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') {
      if (++depth > 1) {
        return InvalidArgumentError("nested '[' in host list");
      }
    } else if (text[i] == ']') {
      if (--depth < 0) {
        return InvalidArgumentError("unbalanced ']' in host list");
      }
    } else if (text[i] == ',' && depth == 0) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) {
    return InvalidArgumentError("unclosed '[' in host list");
  }
  out.push_back(text.substr(start));
  return out;
}

bool AllDigits(std::string_view s) {
  if (s.empty() || s.size() > 18) {
    return false;
  }
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

// "01-64,70" -> {"01", ..., "64", "70"}.
Status ExpandRangeSet(std::string_view set, size_t max_hosts, std::vector<std::string>* out) {
  for (std::string_view item : Split(set, ',')) {
    item = Trim(item);
    const size_t dash = item.find('-');
    std::string_view lo = dash == std::string_view::npos ? item : item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? item : item.substr(dash + 1);
    if (!AllDigits(lo) || !AllDigits(hi)) {
      return InvalidArgumentError(fmt::format("bad range '{}' in host list", item));
    }
    const uint64_t a = *ParseUint64(lo);
    const uint64_t b = *ParseUint64(hi);
    if (b < a) {
      return InvalidArgumentError(fmt::format("reversed range '{}' in host list", item));
    }
    if (b - a >= max_hosts || out->size() + (b - a + 1) > max_hosts) {
      return ResourceExhaustedError(fmt::format("host list expands to more than {}", max_hosts));
    }
    const size_t width = lo.size();
    for (uint64_t v = a; v <= b; ++v) {
      out->push_back(fmt::format("{:0{}}", v, width));
    }
  }
  return OkStatus();
}

Status ExpandItem(std::string_view item, size_t max_hosts, std::vector<std::string>* out) {
  std::vector<std::string> partial = {""};
  size_t pos = 0;
  while (pos < item.size()) {
    const size_t open = item.find('[', pos);
    std::string_view literal =
        item.substr(pos, open == std::string_view::npos ? item.npos : open - pos);
    for (std::string& p : partial) {
      p += literal;
    }
    if (open == std::string_view::npos) {
      break;
    }
    const size_t close = item.find(']', open);
    std::vector<std::string> values;
    VIGIL_RETURN_IF_ERROR(
        ExpandRangeSet(item.substr(open + 1, close - open - 1), max_hosts, &values));
    if (partial.size() * values.size() > max_hosts) {
      return ResourceExhaustedError(fmt::format("host list expands to more than {}", max_hosts));
    }
    std::vector<std::string> next;
    next.reserve(partial.size() * values.size());
    for (const std::string& p : partial) {
      for (const std::string& v : values) {
        next.push_back(p + v);
      }
    }
    partial = std::move(next);
    pos = close + 1;
  }
  if (out->size() + partial.size() > max_hosts) {
    return ResourceExhaustedError(fmt::format("host list expands to more than {}", max_hosts));
  }
  out->insert(out->end(), partial.begin(), partial.end());
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandHostList(std::string_view text, size_t max_hosts) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string_view> items, SplitTopLevel(Trim(text)));
  std::vector<std::string> out;
  for (std::string_view item : items) {
    item = Trim(item);
    if (item.empty()) {
      return InvalidArgumentError("empty entry in host list");
    }
    VIGIL_RETURN_IF_ERROR(ExpandItem(item, max_hosts, &out));
  }
  return out;
}

StatusOr<std::vector<std::string>> ReadHostFile(const std::string& path, size_t max_hosts) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 4 << 20));
  std::vector<std::string> out;
  std::string_view rest = text;
  std::string_view line;
  int lineno = 0;
  while (NextLine(&rest, &line)) {
    ++lineno;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    std::string_view field;
    if (!NextField(&line, &field)) {
      continue;
    }
    auto hosts = ExpandHostList(field, max_hosts - out.size());
    if (!hosts.ok()) {
      return hosts.status().WithContext(fmt::format("{}:{}", path, lineno));
    }
    out.insert(out.end(), hosts->begin(), hosts->end());
  }
  return out;
}

}  // namespace vigil
