// SPDX-License-Identifier: Apache-2.0
#include "cli/metrics_table.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/reply.h"

namespace vigil {
namespace {

constexpr size_t kGap = 2;         // TextTable's column separator.
constexpr size_t kLongValue = 16;  // Label values longer than this are shortened in the middle.

// "GPU-5151a000-0000-4000-8000-000000000001" -> "GPU-51..000001": both ends, where ids differ.
std::string Shorten(const std::string& value) {
  if (value.size() <= kLongValue) {
    return value;
  }
  return value.substr(0, 6) + ".." + value.substr(value.size() - 6);
}

// Labels with one value on every row (nothing to tell the rows apart by).
std::map<std::string, std::string> CommonLabels(const std::vector<SeriesView>& series) {
  std::map<std::string, std::string> common = series.front().labels;
  for (const SeriesView& s : series) {
    std::erase_if(common, [&s](const auto& kv) {
      auto it = s.labels.find(kv.first);
      return it == s.labels.end() || it->second != kv.second;
    });
  }
  return series.size() > 1 ? common : std::map<std::string, std::string>{};
}

// `key` cut to `max` columns: the name whole, labels cut to end in "...}"; a name longer than
// `max` itself is kept whole (the row then overflows rather than lose the name).
std::string FitKey(const std::string& name, const std::string& key, size_t max) {
  if (key.size() <= max) {
    return key;
  }
  constexpr std::string_view kCut = "...}";
  if (name.size() + 1 + kCut.size() > max) {
    return name + "{" + std::string(kCut);
  }
  return key.substr(0, max - kCut.size()) + std::string(kCut);
}

}  // namespace

std::string RenderMetricsTable(const nlohmann::json& latest_reply, int width) {
  const std::vector<SeriesView> series = ParseSeries(latest_reply);
  if (series.empty()) {
    return "no matching series\n";
  }
  std::vector<std::string> values;
  size_t value_w = 0;
  size_t unit_w = 0;
  for (const SeriesView& s : series) {
    values.push_back(FormatValue(s.last()));
    value_w = std::max(value_w, values.back().size());
    unit_w = std::max(unit_w, s.unit.size());
  }
  // Room left for name{labels}: the value column, the unit column when any series has a unit.
  const size_t fixed = kGap + value_w + (unit_w > 0 ? kGap + unit_w : 0);
  const size_t key_max = width > 0 && static_cast<size_t>(width) > fixed
                             ? static_cast<size_t>(width) - fixed
                             : (width > 0 ? 1 : std::string::npos);
  // A row too wide loses, in turn: the labels every row shares, the middle of long values, then
  // its tail.
  const std::map<std::string, std::string> common = CommonLabels(series);
  TextTable table;
  table.AlignRight(1);
  size_t cut = 0;
  bool dropped_common = false;
  for (size_t i = 0; i < series.size(); ++i) {
    const SeriesView& s = series[i];
    std::string shown = s.Key();
    if (shown.size() > key_max) {
      ++cut;
      std::map<std::string, std::string> labels;
      for (const auto& [k, v] : s.labels) {
        if (common.count(k) == 0) labels[k] = v;
      }
      dropped_common = dropped_common || labels.size() < s.labels.size();
      shown = s.name + FormatLabels(labels);
      if (shown.size() > key_max) {
        for (auto& [k, v] : labels) v = Shorten(v);
        shown = s.name + FormatLabels(labels);
      }
      shown = FitKey(s.name, shown, key_max);
    }
    table.AddRow({std::move(shown), values[i], s.unit});
  }
  std::string out = table.Render();
  if (cut > 0) {
    std::string names;
    for (const auto& [k, v] : common) {
      names += (names.empty() ? "" : ", ") + k;
    }
    out += fmt::format("({} of {} rows shortened; --wide prints them whole)\n", cut, series.size());
    if (dropped_common) {
      out += "(same on every row: " + names + ")\n";
    }
  }
  return out;
}

}  // namespace vigil
