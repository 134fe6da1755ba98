// SPDX-License-Identifier: Apache-2.0
// Short forms of kernel and operator names for the text and HTML reports, which have no room for
// a 600-character template instantiation. The JSON report always writes names whole; a short form
// is for display only, and one DisplayNames object (one per rendered report) never gives two
// different names the same short form: a collision shows more of the name, then a hash of it.
// Owner: trace.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace vigil::trace {

// "void at::native::(anonymous namespace)::f<float, 4>(int, float*)" ->
// "at::native::(anonymous namespace)::f<...>": drops a leading "void " and the argument list,
// collapses template arguments, and keeps every namespace, "(anonymous namespace)" included.
// At most `max` characters (the middle elided as "..."); `max` of 0 means no limit.
std::string ShortenName(std::string_view name, size_t max);

// As ShortenName, but with the template arguments kept.
std::string ShortenNameKeepTemplates(std::string_view name, size_t max);

class DisplayNames {
 public:
  explicit DisplayNames(size_t max) : max_(max) {}
  // The short form of `name`, the same on every call, distinct from those of the other names.
  const std::string& Get(std::string_view name);

 private:
  size_t max_;
  std::map<std::string, std::string, std::less<>> by_name_;  // full name -> short form
  std::map<std::string, std::string, std::less<>> owner_;    // short form -> full name
};

}  // namespace vigil::trace
