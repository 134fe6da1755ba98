// SPDX-License-Identifier: Apache-2.0
// The what-if projections (analysis/what_if.h) in the reports: a "what_if" object per rank and in
// the multi-rank critical path (documented in docs/trace-json-schema.md), and a line each in the
// terminal summary. Owner: trace. Pure functions of a Report.
#pragma once

#include <string>

#include "trace/report/json_writer.h"
#include "trace/results/report.h"

namespace vigil::trace {

void WriteRankWhatIf(const RankReport& rank, JsonWriter* w);          // json_what_if.cc
void WriteMultiRankWhatIf(const Report& report, JsonWriter* w);       // json_what_if.cc
void AppendRankWhatIfText(const RankReport& rank, std::string* out);  // text_what_if.cc
void AppendMultiRankWhatIfText(const Report& report, std::string* out);

}  // namespace vigil::trace
