// SPDX-License-Identifier: Apache-2.0
#include "cli/format.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace vigil {

std::string TextTable::Render() const {
  std::vector<size_t> widths;
  auto measure = [&widths](const std::vector<std::string>& row) {
    if (widths.size() < row.size()) {
      widths.resize(row.size(), 0);
    }
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& row : rows_) {
    measure(row);
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool last = i + 1 == row.size();
      const bool right = std::find(right_.begin(), right_.end(), i) != right_.end();
      const size_t pad = widths[i] - row[i].size();
      if (i > 0) {
        line += "  ";
      }
      if (right) {
        line.append(pad, ' ');
        line += row[i];
      } else {
        line += row[i];
        if (!last) {
          line.append(pad, ' ');
        }
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line;
    out += '\n';
  };
  if (!header_.empty()) {
    emit(header_);
  }
  for (const auto& row : rows_) {
    emit(row);
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<int64_t>(value));
  }
  return fmt::format("{:.6g}", value);
}

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (std::isnan(bytes)) {
    return "-";
  }
  size_t unit = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", FormatValue(v))
                   : fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string FormatPercent(double ratio) {
  if (std::isnan(ratio)) {
    return "-";
  }
  return fmt::format("{:.1f}%", ratio * 100);
}

std::string FormatSeconds(double seconds) {
  if (std::isnan(seconds) || seconds < 0) {
    return "-";
  }
  if (seconds < 10) {
    return fmt::format("{:.1f}s", seconds);
  }
  const auto s = static_cast<int64_t>(seconds);
  if (s < 60) {
    return fmt::format("{}s", s);
  }
  if (s < 3600) {
    return fmt::format("{}m{:02}s", s / 60, s % 60);
  }
  if (s < 86400) {
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  }
  return fmt::format("{}d{:02}h", s / 86400, (s % 86400) / 3600);
}

std::string FormatLabels(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) {
    return "";
  }
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) {
      out += ',';
    }
    first = false;
    out += name;
    out += "=\"";
    for (char c : value) {
      if (c == '"' || c == '\\') {
        out += '\\';
      }
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string FormatWithUnit(double value, const std::string& unit) {
  if (unit == "bytes") {
    return FormatBytes(value);
  }
  if (unit == "ratio") {
    return FormatPercent(value);
  }
  return FormatValue(value);
}

}  // namespace vigil
