// SPDX-License-Identifier: Apache-2.0
// Human numbers for the snoop terminal outputs (summary and live view): byte sizes, seconds,
// counts and rates, each short enough for a table cell. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vigil::snoop {

// 0 -> "0 B", 512 -> "512 B", 1536 -> "1.5 KiB", 3 << 30 -> "3.0 GiB".
std::string FormatBytes(uint64_t bytes);
// 0.0001234 -> "123.4us", 0.0123 -> "12.30ms", 2.5 -> "2.500s".
std::string FormatSeconds(double seconds);
// 950 -> "950", 12345 -> "12.3k", 4.2e6 -> "4.20M"; one decimal below 10 ("2.5").
std::string FormatRate(double per_second);
// Columns separated by two spaces, each as wide as its widest cell; the columns listed in
// `right` are right-aligned (numbers). Every line is indented by `indent` spaces; the last
// column is never padded.
std::string RenderColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::vector<size_t>& right, size_t indent);
// Cuts `text` to `width` columns, ending in "..." when cut; width <= 3 leaves it unchanged.
std::string Ellipsize(const std::string& text, size_t width);

}  // namespace vigil::snoop
