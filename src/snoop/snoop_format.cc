// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_format.h"

#include <algorithm>

#include <fmt/format.h>

namespace vigil::snoop {

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) {
    return fmt::format("{} B", bytes);
  }
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string FormatSeconds(double seconds) {
  if (seconds < 1e-3) {
    return fmt::format("{:.1f}us", seconds * 1e6);
  }
  if (seconds < 1) {
    return fmt::format("{:.2f}ms", seconds * 1e3);
  }
  return fmt::format("{:.3f}s", seconds);
}

std::string FormatRate(double per_second) {
  if (per_second < 10) {
    return fmt::format("{:.1f}", per_second);
  }
  if (per_second < 1000) {
    return fmt::format("{:.0f}", per_second);
  }
  if (per_second < 1e6) {
    return fmt::format("{:.1f}k", per_second / 1e3);
  }
  return fmt::format("{:.2f}M", per_second / 1e6);
}

std::string RenderColumns(const std::vector<std::vector<std::string>>& rows,
                          const std::vector<size_t>& right, size_t indent) {
  std::vector<size_t> widths;
  for (const std::vector<std::string>& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  std::string out;
  for (const std::vector<std::string>& row : rows) {
    std::string line(indent, ' ');
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const size_t pad = widths[c] - row[c].size();
      const bool align_right = std::find(right.begin(), right.end(), c) != right.end();
      if (align_right) {
        line.append(pad, ' ');
      }
      line += row[c];
      if (!align_right && !last) {
        line.append(pad, ' ');
      }
      if (!last) {
        line += "  ";
      }
    }
    out += line;
    out += '\n';
  }
  return out;
}

std::string Ellipsize(const std::string& text, size_t width) {
  if (width <= 3 || text.size() <= width) {
    return text;
  }
  return text.substr(0, width - 3) + "...";
}

}  // namespace vigil::snoop
