// SPDX-License-Identifier: Apache-2.0
// Text output helpers for `vigil` subcommands: aligned tables, human numbers, byte sizes,
// durations and Prometheus-style label sets. Pure functions and a value type; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vigil {

// Columns separated by two spaces, each as wide as its widest cell. Right-aligned columns are
// for numbers. The last column is never padded (no trailing spaces).
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header = {}) : header_(std::move(header)) {}
  void AlignRight(size_t column) { right_.push_back(column); }
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> right_;
};

// 42 -> "42", 12345678901 -> "12345678901", 0.25 -> "0.25", 1.23456789e-7 -> "1.23457e-07",
// NaN -> "NaN".
std::string FormatValue(double value);
// 1536 -> "1.5 KiB"; below 1 KiB plain "512 B".
std::string FormatBytes(double bytes);
// 0.375 -> "37.5%".
std::string FormatPercent(double ratio);
// 12 -> "12s", 312 -> "5m12s", 7380 -> "2h03m", 273600 -> "3d04h"; below 10 s one decimal.
std::string FormatSeconds(double seconds);
// {"a":"b","c":"d"} -> `{a="b",c="d"}`; empty -> "". Quotes and backslashes are escaped.
std::string FormatLabels(const std::map<std::string, std::string>& labels);
// Renders a value with its unit where that reads better: bytes as KiB/MiB, seconds stay.
std::string FormatWithUnit(double value, const std::string& unit);

}  // namespace vigil
