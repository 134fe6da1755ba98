// SPDX-License-Identifier: Apache-2.0
// HTML sections for the launch queue length and memory bandwidth summaries (per rank) and the
// cross-rank critical path (one per report): small tables with inline SVG sparklines and bars.
#include <algorithm>

#include <fmt/format.h>

#include "trace/report/html_report.h"
#include "trace/report/html_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

constexpr int kSparkW = 160, kSparkH = 18;

// A step-function sparkline of (time, value) points.
template <typename Point, typename Value>
std::string Sparkline(const std::vector<Point>& pts, Value value, const char* color) {
  if (pts.size() < 2) return "";
  int64_t t0 = pts.front().ts, t1 = pts.back().ts;
  double top = 0;
  for (const Point& p : pts) top = std::max(top, static_cast<double>(value(p)));
  if (t1 <= t0 || top <= 0) return "";
  std::string poly;
  double prev_y = kSparkH;
  for (const Point& p : pts) {
    double x = kSparkW * static_cast<double>(p.ts - t0) / static_cast<double>(t1 - t0);
    double y = kSparkH - kSparkH * static_cast<double>(value(p)) / top;
    poly += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", x, prev_y, x, y);
    prev_y = y;
  }
  return fmt::format(
      R"(<svg width="{}" height="{}"><polyline fill="none" stroke="{}" stroke-width="1" points="{}"/></svg>)",
      kSparkW, kSparkH, color, poly);
}

std::string Bar(double pct, const char* color) {
  return fmt::format(
      R"(<svg width="120" height="10"><rect width="{:.1f}" height="10" fill="{}"/></svg> {:.1f}%)",
      1.2 * std::clamp(pct, 0.0, 100.0), color, pct);
}

}  // namespace

void HtmlCounters(const RankReport& r, std::string* out) {
  std::string& h = *out;
  const QueueLengthSummary& q = r.queue_length;
  if (!q.streams.empty()) {
    h += "<h3>Launch queue length per stream</h3><table><tr><th>stream</th><th "
         "class=num>points</th><th class=num>mean</th><th class=num>time-weighted</th><th "
         "class=num>p50</th><th class=num>max</th><th>over time</th></tr>";
    for (const StreamQueueLength& s : q.streams) {
      h += fmt::format(
          "<tr><td>{}</td><td class=num>{}</td><td class=num>{:.2f}</td><td "
          "class=num>{:.2f}</td><td class=num>{:.1f}</td><td class=num>{:.0f}</td><td>{}</td></tr>",
          s.stream, s.stats.count, s.stats.mean, s.time_weighted_mean, s.stats.p50, s.stats.max,
          Sparkline(
              s.series, [](const QueuePoint& p) { return p.length; }, "#1565c0"));
    }
    h += "</table>";
  }
  const MemoryBandwidthSummary& m = r.memory_bw;
  if (!m.kinds.empty()) {
    h += fmt::format(
        "<h3>Memory bandwidth by copy kind (GB/s{})</h3><table><tr><th>kind</th><th "
        "class=num>copies</th><th class=num>mean</th><th class=num>p50</th><th "
        "class=num>max</th><th>over time</th></tr>",
        m.recorded_bandwidth ? ", as recorded" : ", bytes / duration");
    for (const MemoryKindBandwidth& k : m.kinds) {
      h += fmt::format(
          "<tr><td>{}</td><td class=num>{}</td><td class=num>{:.3g}</td><td "
          "class=num>{:.3g}</td><td class=num>{:.3g}</td><td>{}</td></tr>",
          HtmlEscape(k.kind), k.ops, k.stats.mean, k.stats.p50, k.stats.max,
          Sparkline(
              k.series, [](const BandwidthPoint& p) { return p.gbps; }, "#00838f"));
    }
    h += "</table>";
  }
}

void HtmlMultiRankPath(const Report& report, std::string* out) {
  const MultiRankCriticalPath& p = report.multi_path;
  if (report.ranks.size() < 2) return;
  std::string& h = *out;
  h += "<h2>Cross-rank critical path</h2>";
  if (!p.valid) {
    h += "<p>" + HtmlEscape(p.note) + "</p>";
    return;
  }
  int64_t len = p.Length();
  auto pct = [&](int64_t ns) { return len > 0 ? 100.0 * static_cast<double>(ns) / len : 0.0; };
  h += fmt::format(
      "<p>{} over {}, bound by <b>{}</b>; {} collectives matched ({}); {}</p>", FormatDuration(len),
      p.step >= 0 ? fmt::format("ProfilerStep#{}", p.step) : "the whole trace", p.BoundBy(),
      p.matches.collectives.size(),
      p.matches.recorded_args ? "by recorded collective arguments" : "by kernel order per stream",
      HtmlEscape(p.note));
  static const char* kColors[] = {"#2e7d32", "#1565c0", "#ef6c00", "#c62828", "#bdbdbd"};
  h += "<table><tr><th>time on the path</th><th class=num>total</th><th></th></tr>";
  for (int c = 0; c < 5; ++c) {
    h += fmt::format("<tr><td>{}</td><td class=num>{}</td><td>{}</td></tr>",
                     PathCategoryName(static_cast<PathCategory>(c)),
                     FormatDuration(p.by_category[c]), Bar(pct(p.by_category[c]), kColors[c]));
  }
  h += "</table><table><tr><th>rank</th><th class=num>on the path</th><th></th><th "
       "class=num>clock offset</th></tr>";
  for (const RankPathShare& s : p.ranks) {
    bool aligned = s.rank_index < p.matches.aligned.size() && p.matches.aligned[s.rank_index];
    h += fmt::format("<tr><td>{}</td><td class=num>{}</td><td>{}</td><td class=num>{}</td></tr>",
                     s.rank, FormatDuration(s.ns), Bar(s.pct, "#6a1b9a"),
                     aligned ? FormatDuration(p.matches.offset_ns[s.rank_index]) : "not aligned");
  }
  h += "</table>";
  if (!p.crossings.empty()) {
    std::vector<PathCrossing> x = p.crossings;
    std::stable_sort(x.begin(), x.end(), [](const PathCrossing& a, const PathCrossing& b) {
      return a.wait_ns > b.wait_ns;
    });
    h += "<table><tr><th>collective</th><th>waited</th><th>last to arrive</th><th "
         "class=num>wait</th><th class=num>late by</th></tr>";
    for (size_t i = 0; i < std::min<size_t>(10, x.size()); ++i) {
      h += fmt::format(
          "<tr><td>{}</td><td>rank {}</td><td>rank {}</td><td class=num>{}</td><td "
          "class=num>{}</td></tr>",
          HtmlEscape(p.matches.collectives[x[i].collective].Label()),
          report.ranks[x[i].waiting_rank_index].rank, report.ranks[x[i].last_rank_index].rank,
          FormatDuration(x[i].wait_ns), FormatDuration(x[i].late_by_ns));
    }
    h += "</table>";
  }
}

}  // namespace vigil::trace
