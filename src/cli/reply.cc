// SPDX-License-Identifier: Apache-2.0
#include "cli/reply.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cli/format.h"

namespace vigil {

std::string JsonString(const nlohmann::json& obj, const char* key, const std::string& fallback) {
  if (!obj.is_object()) {
    return fallback;
  }
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return fallback;
  }
  if (it->is_string()) {
    return it->get<std::string>();
  }
  return it->dump();
}

double JsonNumber(const nlohmann::json& obj, const char* key, double fallback) {
  if (!obj.is_object()) {
    return fallback;
  }
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

const nlohmann::json& JsonArray(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!obj.is_object()) {
    return kEmpty;
  }
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

const nlohmann::json& JsonObject(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!obj.is_object()) {
    return kEmpty;
  }
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

std::string SeriesView::Key() const { return name + FormatLabels(labels); }

double SeriesView::last() const {
  return points.empty() ? std::numeric_limits<double>::quiet_NaN() : points.back().second;
}

std::vector<SeriesView> ParseSeries(const nlohmann::json& reply) {
  std::vector<SeriesView> out;
  for (const nlohmann::json& s : JsonArray(reply, "series")) {
    SeriesView v;
    v.name = JsonString(s, "name");
    if (v.name.empty()) {
      continue;
    }
    v.kind = JsonString(s, "kind", "gauge");
    v.unit = JsonString(s, "unit");
    v.help = JsonString(s, "help");
    for (const auto& [k, val] : JsonObject(s, "labels").items()) {
      v.labels[k] = val.is_string() ? val.get<std::string>() : val.dump();
    }
    for (const nlohmann::json& p : JsonArray(s, "points")) {
      if (!p.is_array() || p.size() < 2 || !p[0].is_number()) {
        continue;
      }
      const double value =
          p[1].is_number() ? p[1].get<double>() : std::numeric_limits<double>::quiet_NaN();
      v.points.emplace_back(p[0].get<int64_t>(), value);
    }
    std::sort(v.points.begin(), v.points.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(),
            [](const SeriesView& a, const SeriesView& b) { return a.Key() < b.Key(); });
  return out;
}

}  // namespace vigil
