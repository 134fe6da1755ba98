// SPDX-License-Identifier: Apache-2.0
#include "metrics/prometheus_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace vigil {
namespace {

struct Row {
  const MetricDesc* desc;
  Labels labels;
  double value;
};

Labels MergeLabels(const Labels& own, const Labels& extra) {
  Labels out = own;
  for (const auto& pair : extra) {
    if (std::none_of(own.begin(), own.end(),
                     [&](const auto& p) { return p.first == pair.first; })) {
      out.push_back(pair);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void Render(std::vector<Row> rows, std::string* out) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.desc->name != b.desc->name) {
      return a.desc->name < b.desc->name;
    }
    return a.labels < b.labels;
  });
  std::string_view family;
  for (const Row& row : rows) {
    if (row.desc->name != family) {
      family = row.desc->name;
      fmt::format_to(std::back_inserter(*out), "# HELP {} {}\n# TYPE {} {}\n", family,
                     EscapeHelp(row.desc->help), family, MetricKindName(row.desc->kind));
    }
    out->append(family);
    if (!row.labels.empty()) {
      out->push_back('{');
      bool first = true;
      for (const auto& [name, value] : row.labels) {
        if (!first) {
          out->push_back(',');
        }
        first = false;
        fmt::format_to(std::back_inserter(*out), "{}=\"{}\"", name, EscapeLabelValue(value));
      }
      out->push_back('}');
    }
    out->push_back(' ');
    out->append(FormatPrometheusValue(row.value));
    out->push_back('\n');
  }
}

}  // namespace

std::string FormatPrometheusValue(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  return fmt::format("{}", value);  // Shortest round-trip representation.
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
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
    rows.push_back(Row{s.desc, MergeLabels(s.labels, extra_labels), s.points.back().value});
  }
  std::string out;
  Render(std::move(rows), &out);
  return out;
}

void AppendSamplesAsPrometheusText(std::span<const Sample> samples, const Labels& extra_labels,
                                   std::string* out) {
  std::vector<Row> rows;
  rows.reserve(samples.size());
  for (const Sample& s : samples) {
    if (s.desc != nullptr) {
      rows.push_back(Row{s.desc, MergeLabels(s.labels, extra_labels), s.value});
    }
  }
  Render(std::move(rows), out);
}

}  // namespace vigil
