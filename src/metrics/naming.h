// SPDX-License-Identifier: Apache-2.0
// Vigil's metric naming rules (Prometheus conventions): vigil_<domain>_<what>_<unit>[_total],
// `_total` exactly on counters, base units only, help text one sentence ending in a period.
#pragma once

#include <string_view>

#include "base/status.h"
#include "metrics/metric.h"

namespace vigil {

// OK when `desc` follows every rule; InvalidArgument naming the first rule broken otherwise.
Status CheckMetricDesc(const MetricDesc& desc);
// Label names: [a-z_][a-z0-9_]*, not starting with "__", never "job" (Prometheus renames it).
Status CheckLabelName(std::string_view name);

}  // namespace vigil
