// SPDX-License-Identifier: Apache-2.0
// The label rules of Prometheus remote-write 1.0 applied to one Vigil sample: the metric name
// becomes `__name__`, names are validated ([a-zA-Z_:][a-zA-Z0-9_:]* for metric names,
// [a-zA-Z_][a-zA-Z0-9_]* for label names, no reserved `__` prefix), labels with empty values are
// left out (Prometheus treats them as absent), duplicate names are rejected, a host label is
// added, and the result is sorted by name in byte order, which puts `__name__` first for every
// name Vigil uses. Pure functions; thread-safe. Owner: the remote-write sink.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "metrics/metric.h"

namespace vigil {

using RwLabels = std::vector<std::pair<std::string, std::string>>;

bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

struct SeriesLabelOptions {
  // Added to every series unless the sample already carries a label of that name (the sample's
  // own value wins). Empty `host_value` adds nothing.
  std::string host_label_name = "host";
  std::string host_value;
};

// The sorted, validated label set of a sample. InvalidArgument names the offending label.
StatusOr<RwLabels> BuildSeriesLabels(std::string_view metric_name, const Labels& labels,
                                     const SeriesLabelOptions& options);

// A string that identifies a label set exactly (names and values joined with separators that
// cannot occur in valid names).
std::string SeriesKey(const RwLabels& labels);

}  // namespace vigil
