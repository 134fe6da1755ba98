// SPDX-License-Identifier: Apache-2.0
// Tolerant readers for daemon replies (docs/protocols.md, "Control RPC"): a missing or mistyped
// field yields a default instead of an exception, so an older or newer vigild never crashes the
// CLI. Also the series shape shared by vigilLatest and vigilRange. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace vigil {

std::string JsonString(const nlohmann::json& obj, const char* key,
                       const std::string& fallback = "");
double JsonNumber(const nlohmann::json& obj, const char* key, double fallback = 0);
// obj[key] when it is an array, else an empty array.
const nlohmann::json& JsonArray(const nlohmann::json& obj, const char* key);
// obj[key] when it is an object, else an empty object.
const nlohmann::json& JsonObject(const nlohmann::json& obj, const char* key);

struct SeriesView {
  std::string name;
  std::string kind;  // "gauge" or "counter".
  std::string unit;
  std::string help;
  std::map<std::string, std::string> labels;
  std::vector<std::pair<int64_t, double>> points;  // (time_ns, value); null values read as NaN.

  std::string Key() const;  // name{labels}
  double last() const;      // Value of the newest point, NaN when none.
};

// Reads {"series":[...]}; entries without a name are skipped. Sorted by Key().
std::vector<SeriesView> ParseSeries(const nlohmann::json& reply);

}  // namespace vigil
