// SPDX-License-Identifier: Apache-2.0
// The HTML report's insights: one card per cause (insight id), with a row per rank it fired on,
// cards ordered by their largest estimated gain, each rank's detail and evidence folded below.
// An 8-rank trace gives one card per cause instead of one per rank and cause.
// Owner: trace.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "trace/report/html_report.h"
#include "trace/report/html_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

// "3", "0, 1, 2" or "-": the ranks an insight's evidence names.
std::string RanksOf(const Insight& in) {
  std::set<int32_t> ranks;
  for (const Evidence& e : in.evidence) {
    if (e.rank >= 0) ranks.insert(e.rank);
  }
  if (ranks.empty()) return "-";
  std::string s;
  for (int32_t r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

void EvidenceTable(const Insight& in, std::string* h) {
  if (in.evidence.empty()) return;
  *h +=
      "<table><tr><th>evidence</th><th>name</th><th>rank</th><th class=num>ts (us)</th><th "
      "class=num>duration</th></tr>";
  for (const Evidence& e : in.evidence) {
    *h += fmt::format(
        "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=num>{}</td><td "
        "class=num>{}</td></tr>",
        HtmlEscape(e.what), HtmlEscape(e.name), e.rank, FormatMicros(e.ts_ns),
        FormatDuration(e.dur_ns));
  }
  *h += "</table>";
}

}  // namespace

std::vector<InsightGroup> GroupInsights(const std::vector<Insight>& insights) {
  std::vector<InsightGroup> groups;
  for (const Insight& in : insights) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const InsightGroup& g) { return g.id == in.id; });
    if (it == groups.end()) {
      groups.push_back({in.id, {}, in.estimated_gain_pct, in.severity});
      it = groups.end() - 1;
    }
    it->members.push_back(&in);
    it->max_gain_pct = std::max(it->max_gain_pct, in.estimated_gain_pct);
    it->severity = std::max(it->severity, in.severity);
  }
  for (InsightGroup& g : groups) {
    std::stable_sort(g.members.begin(), g.members.end(), [](const Insight* a, const Insight* b) {
      return a->estimated_gain_pct > b->estimated_gain_pct;
    });
  }
  std::stable_sort(groups.begin(), groups.end(), [](const InsightGroup& a, const InsightGroup& b) {
    if (a.max_gain_pct != b.max_gain_pct) return a.max_gain_pct > b.max_gain_pct;
    return a.severity > b.severity;
  });
  return groups;
}

void HtmlInsights(const Report& report, std::string* h) {
  *h += "<h2>Insights</h2>";
  if (report.insights.empty()) {
    *h += "<p>None of the rules fired.</p>";
    return;
  }
  std::vector<InsightGroup> groups = GroupInsights(report.insights);
  *h += fmt::format(
      "<p>{} insights from {} causes, one card per cause, ordered by the largest estimated "
      "gain.</p>",
      report.insights.size(), groups.size());
  for (const InsightGroup& g : groups) {
    const Insight& top = *g.members.front();
    *h += fmt::format(
        "<div class=\"card insight-group {}\" data-id=\"{}\" data-gain=\"{:.1f}\"><b>{}</b> "
        "<code>{}</code> · estimated gain up to {:.1f}%{}",
        SeverityName(g.severity), HtmlEscape(g.id), g.max_gain_pct, HtmlEscape(top.title),
        HtmlEscape(g.id), g.max_gain_pct,
        g.members.size() > 1 ? fmt::format(" · fired {} times", g.members.size()) : "");
    if (g.members.size() > 1) {
      *h +=
          "<table><tr><th>rank</th><th>severity</th><th class=num>est. gain</th><th>finding</th>"
          "</tr>";
      for (const Insight* in : g.members) {
        *h += fmt::format(
            "<tr class=insight-row><td>{}</td><td>{}</td><td class=num>{:.1f}%</td><td>{}</td>"
            "</tr>",
            RanksOf(*in), SeverityName(in->severity), in->estimated_gain_pct,
            HtmlEscape(in->title));
      }
      *h += "</table>";
    }
    *h += fmt::format("<br>{}<br><i>Fix:</i> {}", HtmlEscape(top.detail),
                      HtmlEscape(top.recommendation));
    EvidenceTable(top, h);
    if (g.members.size() > 1) {
      *h += "<details><summary>detail and evidence of the other rows</summary>";
      for (size_t i = 1; i < g.members.size(); ++i) {
        const Insight& in = *g.members[i];
        *h += fmt::format("<p><b>{}</b><br>{}", HtmlEscape(in.title), HtmlEscape(in.detail));
        if (in.recommendation != top.recommendation) {
          *h += "<br><i>Fix:</i> " + HtmlEscape(in.recommendation);
        }
        *h += "</p>";
        EvidenceTable(in, h);
      }
      *h += "</details>";
    }
    *h += "</div>";
  }
}

}  // namespace vigil::trace
