// SPDX-License-Identifier: Apache-2.0
// The JSON report's section writers, one per analysis (trace/analyses.cc lists them beside the
// analysis that fills each section). A rank section writes its keys into the rank's object, a
// report section into the top-level object.
// Owner: trace.
#pragma once

#include "trace/report/json_writer.h"
#include "trace/results/report.h"

namespace vigil::trace {

// json_report.cc
void JsonTemporal(const RankReport& r, JsonWriter* w);
void JsonSteps(const RankReport& r, JsonWriter* w);
void JsonIdle(const RankReport& r, JsonWriter* w);
void JsonKernels(const RankReport& r, JsonWriter* w);
void JsonOverlap(const RankReport& r, JsonWriter* w);
void JsonLaunch(const RankReport& r, JsonWriter* w);
// json_report_extras.cc
void JsonMemcpy(const RankReport& r, JsonWriter* w);
void JsonSyncs(const RankReport& r, JsonWriter* w);
void JsonWorkload(const RankReport& r, JsonWriter* w);
void JsonLaunchBound(const RankReport& r, JsonWriter* w);
void JsonKernelSequences(const RankReport& r, JsonWriter* w);
void JsonUserAnnotations(const RankReport& r, JsonWriter* w);
void JsonMemoryTimeline(const RankReport& r, JsonWriter* w);
void JsonCriticalPath(const RankReport& r, JsonWriter* w);
void JsonEfficiency(const RankReport& r, JsonWriter* w);
void JsonCrossRank(const Report& report, JsonWriter* w);
// json_report_counters.cc
void JsonQueueLength(const RankReport& r, JsonWriter* w);
void JsonMemoryBandwidth(const RankReport& r, JsonWriter* w);
// json_report_multi_rank.cc
void JsonMultiRankPath(const Report& report, JsonWriter* w);

}  // namespace vigil::trace
