// SPDX-License-Identifier: Apache-2.0
#include "cli/metrics_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/format.h"
#include "cli/reply.h"

namespace vigil {
namespace {

constexpr size_t kGap = 2;  // TextTable's column separator.

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
  TextTable table;
  table.AlignRight(1);
  size_t cut = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const SeriesView& s = series[i];
    const std::string key = s.Key();
    std::string shown = FitKey(s.name, key, key_max);
    cut += shown != key ? 1 : 0;
    table.AddRow({std::move(shown), values[i], s.unit});
  }
  std::string out = table.Render();
  if (cut > 0) {
    out += fmt::format("({} of {} rows cut to {} columns; --wide prints them whole)\n", cut,
                       series.size(), width);
  }
  return out;
}

}  // namespace vigil
