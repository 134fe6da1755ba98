// SPDX-License-Identifier: Apache-2.0
#include "daemon/series_json.h"

#include <cmath>

namespace vigil::daemon {

nlohmann::json SeriesToJson(const SeriesData& series) {
  nlohmann::json out;
  out["name"] = series.desc ? series.desc->name : "";
  out["kind"] = series.desc ? MetricKindName(series.desc->kind) : "gauge";
  out["unit"] = series.desc ? series.desc->unit : "";
  out["help"] = series.desc ? series.desc->help : "";
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [key, value] : series.labels) {
    labels[key] = value;
  }
  out["labels"] = std::move(labels);
  nlohmann::json points = nlohmann::json::array();
  for (const Point& p : series.points) {
    nlohmann::json value = std::isfinite(p.value) ? nlohmann::json(p.value) : nlohmann::json();
    points.push_back(nlohmann::json::array({p.time_ns, std::move(value)}));
  }
  out["points"] = std::move(points);
  return out;
}

nlohmann::json SeriesListToJson(const std::vector<SeriesData>& series) {
  nlohmann::json list = nlohmann::json::array();
  for (const SeriesData& s : series) {
    list.push_back(SeriesToJson(s));
  }
  return nlohmann::json{{"series", std::move(list)}};
}

StatusOr<nlohmann::json> QueryLatest(const SeriesStore& store, const std::string& selector,
                                     int64_t max_age_ns) {
  VIGIL_ASSIGN_OR_RETURN(SeriesSelector parsed, ParseSelector(selector));
  return SeriesListToJson(store.Latest(parsed, max_age_ns));
}

StatusOr<nlohmann::json> QueryRange(const SeriesStore& store, const std::string& selector,
                                    int64_t start_ns, int64_t end_ns, int64_t step_ns) {
  if (start_ns > end_ns) {
    return InvalidArgumentError("start is after end");
  }
  if (step_ns < 0) {
    return InvalidArgumentError("step must not be negative");
  }
  VIGIL_ASSIGN_OR_RETURN(SeriesSelector parsed, ParseSelector(selector));
  return SeriesListToJson(store.Range(parsed, start_ns, end_ns, step_ns));
}

}  // namespace vigil::daemon
