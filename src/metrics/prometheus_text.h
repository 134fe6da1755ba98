// SPDX-License-Identifier: Apache-2.0
// Prometheus text exposition format 0.0.4 (what /metrics serves): one `# HELP` and `# TYPE` per
// family, families sorted by name, series sorted by labels, label values escaped, values spelled
// so they parse back to the same double (NaN, +Inf, -Inf as Prometheus writes them), and no
// timestamps. Pure functions; safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "metrics/series_store.h"

namespace vigil {

// Renders the newest point of each series; series without points are skipped. `extra_labels`
// (e.g. host) are added to every series that lacks a label of that name.
std::string RenderPrometheusText(const std::vector<SeriesData>& series,
                                 const Labels& extra_labels = {});

// Renders the newest point of every series of `store` updated within `max_age_ns` (0 = any)
// without copying a label: what a /metrics scrape answers.
std::string RenderStoreAsPrometheusText(const SeriesStore& store, int64_t max_age_ns);

// Renders `samples` (already one per series) the same way, appending to *out.
void AppendSamplesAsPrometheusText(std::span<const Sample> samples, const Labels& extra_labels,
                                   std::string* out);

// Shortest text that parses back to `value`: "1", "0.25", "1e+20", "NaN", "+Inf", "-Inf".
std::string FormatPrometheusValue(double value);
// Escapes \, " and newline as the exposition format requires inside label values.
std::string EscapeLabelValue(std::string_view value);

}  // namespace vigil
