// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --json FILE`: the versioned report documented in docs/trace-json-schema.md.
// Times are microseconds written as decimals with exactly three digits after the point, so they
// carry nanosecond precision. Pure function of a Report.
// Owner: trace.
#pragma once

#include <string>

#include "trace/report/json_writer.h"
#include "trace/results/report.h"

namespace vigil::trace {

inline constexpr int kJsonSchemaVersion = 1;

std::string RenderJsonReport(const Report& report, bool pretty = true);

// Parts shared between the writer files.
void WriteDataQuality(const DataQuality& q, JsonWriter* w);
// [{"id", "detail", "affects": [...]}] for model/data_problems.h's problems of the rank.
void WriteDataProblems(const RankTrace& t, JsonWriter* w);
void WriteInsights(const Report& report, JsonWriter* w);

}  // namespace vigil::trace
