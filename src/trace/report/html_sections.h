// SPDX-License-Identifier: Apache-2.0
// The HTML report's section writers, one per analysis (trace/analyses.cc lists them beside the
// analysis each renders). A rank section appends to the rank's part of the page, a report
// section after the ranks.
// Owner: trace.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
// html_timeline.cc: the GPU timeline of a rank, and the page's one script that zooms it.
void HtmlGpuTimeline(const RankReport& r, std::string* h);
// The gaps (ns, trace clock) when no stream of a device runs anything, per device id: the
// timeline's idle lanes.
std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> DeviceIdleGaps(const RankReport& r);
std::string_view HtmlTimelineScript();
// html_report_insights.cc: insights of the same id (across ranks) as one group, groups ordered
// by their largest estimated gain, members by gain.
struct InsightGroup {
  std::string id;
  std::vector<const Insight*> members;
  double max_gain_pct = 0;
  Severity severity = Severity::kInfo;  // the most severe member's
};
std::vector<InsightGroup> GroupInsights(const std::vector<Insight>& insights);
void HtmlInsights(const Report& report, std::string* h);

}  // namespace vigil::trace
