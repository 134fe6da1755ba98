// SPDX-License-Identifier: Apache-2.0
// The interned strings of one rank's trace (names, categories): events store 32-bit ids.
// Owner: trace. Built by the reader, then read-only.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace vigil::trace {

// Interned strings: names repeat millions of times, so events store a 32-bit id.
class StringTable {
 public:
  StringTable() { Intern(""); }
  // The index holds views into strings_: a copy must rebuild it; a move keeps the strings where
  // they are (deque nodes move with the container).
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;
  uint32_t Intern(std::string_view s);
  std::string_view Get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  // Returns UINT32_MAX when absent.
  uint32_t Find(std::string_view s) const;

 private:
  std::deque<std::string> strings_;  // deque: push_back keeps views valid
  std::unordered_map<std::string_view, uint32_t> index_;
};

}  // namespace vigil::trace
