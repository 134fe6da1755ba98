// SPDX-License-Identifier: Apache-2.0
#include "trace/report/html_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "trace/analyses.h"
#include "trace/model/data_problems.h"
#include "trace/report/html_sections.h"
#include "trace/report/op_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:15px}table{border-collapse:collapse;font-size:13px}
td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left}
.num{text-align:right;font-variant-numeric:tabular-nums}
.card{border-left:6px solid #999;padding:8px 12px;margin:10px 0;background:#fafafa}
.critical{border-color:#c62828}.warning{border-color:#ef6c00}.info{border-color:#1565c0}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
code{font-size:12px;word-break:break-all}
.tl-body{display:flex}.tl-labels{flex:0 0 150px;font-size:11px;padding-top:2px}
.tl-labels div{height:18px;line-height:14px;white-space:nowrap;overflow:hidden}
.tl-svg{flex:1;background:#fcfcfc;cursor:grab}.tl-bar,.tl-note{font-size:12px}
)";

struct Part {
  double value;
  const char* color;
  std::string label;
};

std::string StackedBar(const std::vector<Part>& parts, int width = 900, int height = 26) {
  double total = 0;
  for (const Part& p : parts) total += std::max(0.0, p.value);
  std::string s = fmt::format(R"(<svg width="{}" height="{}" role="img">)", width, height);
  double x = 0;
  for (const Part& p : parts) {
    if (total <= 0 || p.value <= 0) continue;
    double w = width * p.value / total;
    s += fmt::format(
        R"(<rect x="{:.1f}" y="0" width="{:.1f}" height="{}" fill="{}"><title>{} {:.1f}%</title></rect>)",
        x, w, height, p.color, HtmlEscape(p.label), 100 * p.value / total);
    x += w;
  }
  s += "</svg><div class=legend>";
  for (const Part& p : parts) {
    s += fmt::format(R"(<span><i class=sw style="background:{}"></i>{} {:.1f}%</span>)", p.color,
                     HtmlEscape(p.label), total > 0 ? 100 * p.value / total : 0.0);
  }
  return s + "</div>";
}

std::string StepTimeline(const RankReport& r) {
  if (r.steps.empty()) return "<p>No ProfilerStep ranges in this trace.</p>";
  const int width = 900, row = 18;
  int64_t t0 = r.steps.front().ts, t1 = t0;
  for (const StepReport& s : r.steps) t1 = std::max(t1, s.ts + s.dur);
  double scale = t1 > t0 ? static_cast<double>(width - 80) / (t1 - t0) : 0;
  std::string svg =
      fmt::format(R"(<svg width="{}" height="{}">)", width, row * (r.steps.size() + 1));
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const StepReport& s = r.steps[i];
    double x = 80 + (s.ts - t0) * scale, w = std::max(1.0, s.dur * scale);
    const TemporalBreakdown& tb = s.temporal;
    double busy = tb.valid ? tb.Pct(tb.compute) / 100 : 0,
           other = tb.valid ? tb.Pct(tb.non_compute) / 100 : 0;
    double y = row * i + 2;
    svg += fmt::format(R"(<text x="0" y="{}" font-size="11">step {}</text>)", y + 11, s.number);
    svg += fmt::format(
        R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="#e0e0e0"><title>step {}: {}</title></rect>)",
        x, y, w, row - 4, s.number, FormatDuration(s.dur));
    svg += fmt::format(R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="#2e7d32"/>)", x,
                       y, w * busy, row - 4);
    svg += fmt::format(R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="#1565c0"/>)",
                       x + w * busy, y, w * other, row - 4);
  }
  return svg +
         "</svg><div class=legend><span><i class=sw style=\"background:#2e7d32\"></i>compute</span>"
         "<span><i class=sw style=\"background:#1565c0\"></i>comm/memory/other</span>"
         "<span><i class=sw style=\"background:#e0e0e0\"></i>GPU idle</span></div>";
}

std::string MemoryChart(const DeviceMemory& d) {
  if (d.points.size() < 2) return "";
  const int width = 900, height = 120;
  int64_t t0 = d.points.front().ts, t1 = d.points.back().ts;
  int64_t top = std::max<int64_t>({d.capacity, d.peak_reserved, d.peak_allocated, 1});
  std::string poly;
  for (const MemoryPoint& p : d.points) {
    double x = t1 > t0 ? width * static_cast<double>(p.ts - t0) / (t1 - t0) : 0;
    double y = height - height * static_cast<double>(p.allocated) / top;
    poly += fmt::format("{:.1f},{:.1f} ", x, y);
  }
  return fmt::format(
      R"(<p>Device {} memory allocated (peak {} MiB{}):</p><svg width="{}" height="{}"><rect width="{}" height="{}" fill="#f5f5f5"/><polyline fill="none" stroke="#6a1b9a" stroke-width="1.5" points="{}"/></svg>)",
      d.device_id, d.peak_allocated >> 20,
      d.capacity > 0 ? fmt::format(" of {} MiB", d.capacity >> 20) : "", width, height, width,
      height, poly);
}

void RenderRank(const RankReport& r, std::string* h) {
  const RankTrace& t = *r.trace;
  *h += fmt::format("<h2>Rank {}</h2><p><code>{}</code>{}</p>", r.rank, HtmlEscape(t.path),
                    t.meta.devices.empty() ? "" : " · " + HtmlEscape(t.meta.devices.front().name));
  for (const RankAnalysis* a : RankAnalysesInHtmlOrder()) a->html(r, h);
}

}  // namespace

void HtmlTemporal(const RankReport& r, std::string* h) {
  const TemporalBreakdown& tb = r.temporal;
  if (!tb.valid) {
    *h += "<p>No GPU work (CPU-only trace).</p>";
    return;
  }
  *h += fmt::format("<h3>GPU time ({})</h3>", FormatDuration(tb.kernel_time * r.unit_ns));
  *h += StackedBar({{static_cast<double>(tb.compute), "#2e7d32", "compute"},
                    {static_cast<double>(tb.non_compute), "#1565c0", "comm/memory/other"},
                    {static_cast<double>(tb.idle), "#bdbdbd", "idle"}});
}

void HtmlIdle(const RankReport& r, std::string* h) {
  if (!r.temporal.valid) return;
  *h += "<h3>Idle causes</h3>";
  *h += StackedBar({{static_cast<double>(r.idle.host_wait), "#ef6c00", "host wait"},
                    {static_cast<double>(r.idle.kernel_wait), "#fbc02d", "kernel wait"},
                    {static_cast<double>(r.idle.other), "#8d6e63", "other"}});
}

void HtmlSteps(const RankReport& r, std::string* h) {
  *h += "<h3>Step timeline</h3>" + StepTimeline(r);
}

void HtmlKernels(const RankReport& r, std::string* h) {
  const RankTrace& t = *r.trace;
  const int64_t u = r.unit_ns;
  *h +=
      "<h3>Top kernels</h3><table><tr><th>kernel</th><th>class</th><th class=num>count</th><th "
      "class=num>total</th><th class=num>mean</th><th></th></tr>";
  int64_t busy = 0;
  for (const KernelStat& k : r.kernels.kernels) busy += k.sum;
  for (size_t i = 0; i < std::min<size_t>(15, r.kernels.kernels.size()); ++i) {
    const KernelStat& k = r.kernels.kernels[i];
    double pct = busy > 0 ? 100.0 * k.sum / busy : 0;
    *h += fmt::format(
        R"(<tr><td><code>{}</code></td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td><svg width="120" height="10"><rect width="{:.1f}" height="10" fill="#2e7d32"/></svg> {:.1f}%</td></tr>)",
        HtmlEscape(t.strings.Get(k.name)), KernelClassName(k.cls), k.count,
        FormatDuration(k.sum * u), FormatDuration(static_cast<int64_t>(k.mean * u)), 1.2 * pct,
        pct);
  }
  *h += "</table>";
}

void HtmlMemoryTimeline(const RankReport& r, std::string* h) {
  for (const DeviceMemory& d : r.memory) {
    if (d.device_type == 1) *h += MemoryChart(d);
  }
}

void HtmlCriticalPath(const RankReport& r, std::string* h) {
  const CriticalPath& cp = r.critical_path;
  if (cp.rows.empty()) return;
  *h += fmt::format("<h3>Critical path ({}, bound by {})</h3>", FormatDuration(cp.Length()),
                    cp.BoundBy());
  *h += StackedBar({{static_cast<double>(cp.gpu_compute), "#2e7d32", "GPU compute"},
                    {static_cast<double>(cp.gpu_comm), "#1565c0", "GPU comm"},
                    {static_cast<double>(cp.gpu_memory), "#00838f", "GPU memory"},
                    {static_cast<double>(cp.cpu), "#ef6c00", "CPU"},
                    {static_cast<double>(cp.sync), "#c62828", "sync"},
                    {static_cast<double>(cp.gaps), "#bdbdbd", "gaps"}});
}

void HtmlCrossRank(const Report& report, std::string* h) {
  if (report.ranks.size() <= 1) return;
  *h +=
      "<h2>Ranks</h2><table><tr><th>rank</th><th class=num>compute</th><th "
      "class=num>comm</th><th class=num>idle</th><th class=num>mean step</th></tr>";
  for (const RankSummary& s : report.cross.ranks) {
    *h += fmt::format(
        "<tr><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td "
        "class=num>{}</td></tr>",
        s.rank, FormatDuration(s.compute_ns), FormatDuration(s.comm_ns), FormatDuration(s.idle_ns),
        FormatDuration(s.step_ns));
  }
  *h += "</table>";
}

std::string RenderHtmlReport(const Report& report) {
  std::string h =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>vigil analyze</title><style>";
  h += kStyle;
  h += "</style></head><body>";
  h += fmt::format("<h1>vigil analyze: {} rank(s){}</h1>", report.ranks.size(),
                   report.config.hta_compat ? " (HTA-compatible mode)" : "");
  HtmlInsights(report, &h);
  for (const ReportAnalysis& a : ReportAnalyses()) {
    if (a.html != nullptr) a.html(report, &h);
  }
  for (const RankReport& r : report.ranks) RenderRank(r, &h);
  if (report.diff) h += HtmlTraceDiff(*report.diff);
  h += "<h2>Data quality</h2><ul>";
  for (const RankReport& r : report.ranks) {
    const DataQuality& q = r.trace->quality;
    h += fmt::format(
        "<li>rank {}: {} events{}; {} GPU events without launch; {} overlapping kernels on one "
        "stream</li>",
        r.rank, q.events_total,
        q.truncated ? ", <b>truncated</b> (" + HtmlEscape(q.truncation_detail) + ")" : "",
        q.gpu_without_launch, q.overlapping_kernels_same_stream);
    for (const DataProblem& p : FindDataProblems(*r.trace)) {
      h += fmt::format("<li>rank {}: <b>{}</b>: {}; invalidates {}</li>", r.rank, p.id,
                       HtmlEscape(p.detail), HtmlEscape(JoinAffected(p.affects)));
    }
  }
  h += "</ul>";
  if (std::any_of(report.ranks.begin(), report.ranks.end(),
                  [](const RankReport& r) { return r.view.size() > 0; })) {
    h += HtmlTimelineScript();
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace vigil::trace
