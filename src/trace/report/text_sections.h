// SPDX-License-Identifier: Apache-2.0
// The terminal summary's section writers, one per analysis (trace/analyses.cc lists them beside
// the analysis each renders). A rank section appends its lines to the rank's block; a report
// section appends after the ranks. Writers print nothing when their analysis found nothing.
// Owner: trace.
#pragma once

#include <string>

#include "trace/report/text_report.h"
#include "trace/results/report.h"

namespace vigil::trace {

// text_report.cc
void TextTemporal(const RankReport& r, const TextOptions& o, std::string* out);
void TextIdle(const RankReport& r, const TextOptions& o, std::string* out);
void TextKernels(const RankReport& r, const TextOptions& o, std::string* out);
void TextLaunch(const RankReport& r, const TextOptions& o, std::string* out);
void TextCriticalPath(const RankReport& r, const TextOptions& o, std::string* out);
void TextCounters(const RankReport& r, const TextOptions& o, std::string* out);
void TextEfficiency(const RankReport& r, const TextOptions& o, std::string* out);
void TextCrossRank(const Report& report, const TextOptions& o, std::string* out);
void TextMultiRankPath(const Report& report, const TextOptions& o, std::string* out);

}  // namespace vigil::trace
