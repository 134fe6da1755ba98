// SPDX-License-Identifier: Apache-2.0
// The one JSON encoding of series used by every query surface (control RPC vigilLatest /
// vigilRange and HTTP /api/v1/latest, /api/v1/range):
//   {"series":[{"name","kind","unit","help","labels":{k:v},"points":[[time_ns, value]]}]}
// Non-finite values are written as null (JSON has no NaN). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "metrics/series_store.h"

namespace vigil::daemon {

nlohmann::json SeriesToJson(const SeriesData& series);
nlohmann::json SeriesListToJson(const std::vector<SeriesData>& series);

// Runs a latest/range query against `store`. InvalidArgument for a bad selector or window.
StatusOr<nlohmann::json> QueryLatest(const SeriesStore& store, const std::string& selector,
                                     int64_t max_age_ns);
StatusOr<nlohmann::json> QueryRange(const SeriesStore& store, const std::string& selector,
                                    int64_t start_ns, int64_t end_ns, int64_t step_ns);

}  // namespace vigil::daemon
