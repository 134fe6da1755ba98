// SPDX-License-Identifier: Apache-2.0
// The HTML report's section writers, one per analysis (trace/analyses.cc lists them beside the
// analysis each renders). A rank section appends to the rank's part of the page, a report
// section after the ranks.
// Owner: trace.
#pragma once

#include <string>

#include "trace/results/report.h"

namespace vigil::trace {

// html_report.cc
void HtmlTemporal(const RankReport& r, std::string* h);
void HtmlIdle(const RankReport& r, std::string* h);
void HtmlSteps(const RankReport& r, std::string* h);
void HtmlKernels(const RankReport& r, std::string* h);
void HtmlMemoryTimeline(const RankReport& r, std::string* h);
void HtmlCriticalPath(const RankReport& r, std::string* h);
void HtmlCrossRank(const Report& report, std::string* h);
// html_report_counters.cc
void HtmlCounters(const RankReport& r, std::string* h);
void HtmlMultiRankPath(const Report& report, std::string* h);

}  // namespace vigil::trace
