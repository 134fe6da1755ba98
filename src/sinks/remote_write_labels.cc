// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_labels.h"

#include <algorithm>

namespace vigil {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || !(IsAlpha(name[0]) || name[0] == ':')) {
    return false;
  }
  return std::all_of(name.begin() + 1, name.end(),
                     [](char c) { return IsAlpha(c) || IsDigit(c) || c == ':'; });
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || !IsAlpha(name[0])) {
    return false;
  }
  return std::all_of(name.begin() + 1, name.end(), [](char c) { return IsAlpha(c) || IsDigit(c); });
}

StatusOr<RwLabels> BuildSeriesLabels(std::string_view metric_name, const Labels& labels,
                                     const SeriesLabelOptions& options) {
  if (!IsValidMetricName(metric_name)) {
    return InvalidArgumentError("invalid metric name \"" + std::string(metric_name) + "\"");
  }
  RwLabels out;
  out.reserve(labels.size() + 2);
  out.emplace_back("__name__", metric_name);
  bool has_host = false;
  for (const auto& [name, value] : labels) {
    if (!IsValidLabelName(name) || name.starts_with("__")) {
      return InvalidArgumentError("invalid label name \"" + name + "\" on " +
                                  std::string(metric_name));
    }
    if (name == options.host_label_name) {
      has_host = true;
    }
    if (!value.empty()) {
      out.emplace_back(name, value);
    }
  }
  if (!has_host && !options.host_value.empty() && !options.host_label_name.empty()) {
    out.emplace_back(options.host_label_name, options.host_value);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Duplicates are checked over the input names too: a duplicate with an empty value is still a
  // malformed sample.
  for (size_t i = 0; i + 1 < labels.size(); ++i) {
    for (size_t j = i + 1; j < labels.size(); ++j) {
      if (labels[i].first == labels[j].first) {
        return InvalidArgumentError("duplicate label name \"" + labels[i].first + "\" on " +
                                    std::string(metric_name));
      }
    }
  }
  return out;
}

std::string SeriesKey(const RwLabels& labels) {
  std::string key;
  for (const auto& [name, value] : labels) {
    key.append(name);
    key.push_back('\xfe');
    key.append(value);
    key.push_back('\xff');
  }
  return key;
}

}  // namespace vigil
