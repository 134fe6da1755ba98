// SPDX-License-Identifier: Apache-2.0
#include "metrics/prometheus_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace vigil {
namespace {

// One series to render: its own labels (the caller's, not copied) or, when extra labels had to be
// added or its own were not sorted, the sorted union in `merged`. A scrape of the store copies no
// label strings.
struct Row {
  const MetricDesc* desc;
  const Labels* own;
  double value;
  Labels merged;

  const Labels& labels() const { return merged.empty() ? *own : merged; }
};

bool RowLess(const Row& a, const Row& b) {
  if (a.desc->name != b.desc->name) {
    return a.desc->name < b.desc->name;
  }
  return a.labels() < b.labels();
}

Row MakeRow(const MetricDesc* desc, const Labels& own, const Labels& extra, double value) {
  Row row{desc, &own, value, {}};
  for (const auto& pair : extra) {
    if (std::none_of(own.begin(), own.end(),
                     [&](const auto& p) { return p.first == pair.first; })) {
      row.merged.push_back(pair);
    }
  }
  if (!row.merged.empty() || !std::is_sorted(own.begin(), own.end())) {
    row.merged.insert(row.merged.end(), own.begin(), own.end());
    std::sort(row.merged.begin(), row.merged.end());
  }
  return row;
}

// Appends `text` with the escapes of the exposition format: \\ and \n always, \" when `quote`.
void AppendEscaped(std::string_view text, bool quote, std::string* out) {
  size_t from = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\' && c != '\n' && (!quote || c != '"')) {
      continue;
    }
    out->append(text.substr(from, i - from));
    out->push_back('\\');
    out->push_back(c == '\n' ? 'n' : c);
    from = i + 1;
  }
  out->append(text.substr(from));
}

void AppendValue(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    fmt::format_to(std::back_inserter(*out), "{}", value);  // Shortest round-trip representation.
  }
}

// `sorted`: the caller already has the rows in RowLess order (the series store keeps them so).
void Render(std::vector<Row>& rows, std::string* out, bool sorted = false) {
  if (!sorted && !std::is_sorted(rows.begin(), rows.end(), RowLess)) {
    std::sort(rows.begin(), rows.end(), RowLess);
  }
  std::string_view family;
  for (const Row& row : rows) {
    if (row.desc->name != family) {
      family = row.desc->name;
      out->append("# HELP ").append(family).push_back(' ');
      AppendEscaped(row.desc->help, false, out);
      out->append("\n# TYPE ").append(family).push_back(' ');
      out->append(MetricKindName(row.desc->kind)).push_back('\n');
    }
    out->append(family);
    const Labels& labels = row.labels();
    if (!labels.empty()) {
      out->push_back('{');
      bool first = true;
      for (const auto& [name, value] : labels) {
        if (!first) {
          out->push_back(',');
        }
        first = false;
        out->append(name).append("=\"");
        AppendEscaped(value, true, out);
        out->push_back('"');
      }
      out->push_back('}');
    }
    out->push_back(' ');
    AppendValue(row.value, out);
    out->push_back('\n');
  }
}

}  // namespace

std::string FormatPrometheusValue(double value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  AppendEscaped(value, true, &out);
  return out;
}

std::string RenderPrometheusText(const std::vector<SeriesData>& series,
                                 const Labels& extra_labels) {
  std::vector<Row> rows;
  rows.reserve(series.size());
  for (const SeriesData& s : series) {
    if (s.desc == nullptr || s.points.empty()) {
      continue;
    }
    rows.push_back(MakeRow(s.desc, s.labels, extra_labels, s.points.back().value));
  }
  std::string out;
  out.reserve(rows.size() * 96);  // About the mean line length, family headers included.
  Render(rows, &out);
  return out;
}

std::string RenderStoreAsPrometheusText(const SeriesStore& store, int64_t max_age_ns) {
  std::string out;
  store.VisitLatest(max_age_ns, [&](std::vector<LatestRef>& refs) {
    std::vector<Row> rows;
    rows.reserve(refs.size());
    for (const LatestRef& ref : refs) {
      rows.push_back(MakeRow(ref.desc, *ref.labels, {}, ref.point.value));
    }
    out.reserve(rows.size() * 96);
    Render(rows, &out, /*sorted=*/true);  // VisitLatest() hands them by name, then labels.
  });
  return out;
}

void AppendSamplesAsPrometheusText(std::span<const Sample> samples, const Labels& extra_labels,
                                   std::string* out) {
  std::vector<Row> rows;
  rows.reserve(samples.size());
  for (const Sample& s : samples) {
    if (s.desc != nullptr) {
      rows.push_back(MakeRow(s.desc, s.labels, extra_labels, s.value));
    }
  }
  Render(rows, out);
}

}  // namespace vigil
