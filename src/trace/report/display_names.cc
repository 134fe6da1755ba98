// SPDX-License-Identifier: Apache-2.0
#include "trace/report/display_names.h"

#include <fmt/format.h>

namespace vigil::trace {
namespace {

// The argument list: the last top-level "(...)" that is not followed by "::" (so not
// "(anonymous namespace)::"), or npos.
size_t ArgumentListStart(std::string_view s) {
  int angle = 0, paren = 0;
  size_t open = std::string_view::npos, found = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      ++angle;
    } else if (c == '>' && angle > 0 && (i == 0 || s[i - 1] != '-')) {
      --angle;
    } else if (c == '(' && angle == 0) {
      if (paren++ == 0) open = i;
    } else if (c == ')' && angle == 0 && paren > 0) {
      // Not "(anonymous namespace)::", nor a note like "Memcpy DtoH (Device -> Pageable)".
      if (--paren == 0 && s.substr(i + 1, 2) != "::" && open > 0 && s[open - 1] != ' ') {
        found = open;
      }
    }
  }
  return found;
}

std::string CollapseTemplates(std::string_view s) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      if (depth++ == 0) out += "<...>";
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

std::string Fit(std::string s, size_t max) {
  if (max == 0 || s.size() <= max) return s;
  if (max <= 3) return s.substr(0, max);
  // Keep more of the end, where the function's own name is.
  const size_t head = (max - 3) / 3, tail = max - 3 - head;
  return s.substr(0, head) + "..." + s.substr(s.size() - tail);
}

std::string StripSignature(std::string_view name) {
  std::string_view s = name;
  if (s.rfind("void ", 0) == 0) s.remove_prefix(5);
  const size_t args = ArgumentListStart(s);
  if (args != std::string_view::npos) s = s.substr(0, args);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s.empty() ? name : s);
}

}  // namespace

std::string ShortenName(std::string_view name, size_t max) {
  std::string s = CollapseTemplates(StripSignature(name));
  return Fit(s.empty() ? std::string(name) : std::move(s), max);
}

std::string ShortenNameKeepTemplates(std::string_view name, size_t max) {
  return Fit(StripSignature(name), max);
}

const std::string& DisplayNames::Get(std::string_view name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  auto free = [&](const std::string& s) { return owner_.find(s) == owner_.end(); };
  std::string pick;
  for (std::string s : {ShortenName(name, max_), ShortenNameKeepTemplates(name, max_),
                        Fit(std::string(name), max_)}) {
    if (free(s)) {
      pick = std::move(s);
      break;
    }
  }
  // Still taken (long names that differ only in the elided middle): tag it with a hash of the
  // whole name, longer until it is free.
  const size_t hash = std::hash<std::string_view>{}(name);
  for (int digits = 6; pick.empty(); ++digits) {
    std::string tag = fmt::format(" #{:016x}", hash).substr(0, 2 + static_cast<size_t>(digits));
    if (digits > 16) tag += fmt::format("-{}", digits - 16);
    const size_t room = max_ > tag.size() + 4 ? max_ - tag.size() : 4;
    std::string s = ShortenName(name, max_ == 0 ? 0 : room) + tag;
    if (free(s)) pick = std::move(s);
  }
  owner_.emplace(pick, std::string(name));
  return by_name_.emplace(std::string(name), std::move(pick)).first->second;
}

}  // namespace vigil::trace
