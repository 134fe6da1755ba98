// SPDX-License-Identifier: Apache-2.0
#include "trace/report/text_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "trace/report/roofline_report.h"

namespace vigil::trace {
namespace {

std::string Shorten(std::string_view name, size_t max) {
  // Drop argument lists and templates: "void at::native::foo<...>(...)" -> "at::native::foo".
  std::string s(name);
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  size_t paren = s.find('(');
  if (paren != std::string::npos && paren > 0) s = s.substr(0, paren);
  size_t angle = s.find('<');
  if (angle != std::string::npos && angle > 0) s = s.substr(0, angle) + "<>";
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

void RenderRank(const RankReport& r, const TextOptions& opt, std::string* out) {
  const RankTrace& t = *r.trace;
  const int64_t u = r.unit_ns;
  const TemporalBreakdown& tb = r.temporal;
  std::string device = t.meta.devices.empty() ? "" : t.meta.devices.front().name;
  *out +=
      fmt::format("Rank {}{}{} · {} steps{} · {}\n", r.rank, device.empty() ? "" : " · ", device,
                  t.links.steps.size(), r.view.steps_dropped ? " (last dropped)" : "", t.path);
  if (!tb.valid) {
    *out += "  no GPU work in this trace (CPU only)\n";
  } else {
    *out += fmt::format(
        "  GPU span {}: idle {:.1f}%  compute {:.1f}%  other {:.1f}%  (comm {}, exposed {}; "
        "memcpy {})\n",
        FormatDuration(tb.kernel_time * u), tb.Pct(tb.idle), tb.Pct(tb.compute),
        tb.Pct(tb.non_compute), FormatDuration(tb.comm * u), FormatDuration(tb.exposed_comm * u),
        FormatDuration(tb.memory * u));
    int64_t idle = r.idle.host_wait + r.idle.kernel_wait + r.idle.other;
    auto ip = [&](int64_t x) { return idle > 0 ? 100.0 * x / idle : 0.0; };
    *out += fmt::format("  idle causes: host wait {:.0f}%  kernel wait {:.0f}%  other {:.0f}%\n",
                        ip(r.idle.host_wait), ip(r.idle.kernel_wait), ip(r.idle.other));
    *out += "  top kernels:\n";
    int64_t busy = 0;
    for (const KernelStat& k : r.kernels.kernels) busy += k.sum;
    for (size_t i = 0; i < std::min(opt.top_kernels, r.kernels.kernels.size()); ++i) {
      const KernelStat& k = r.kernels.kernels[i];
      *out += fmt::format("    {:>5.1f}%  {:>10}  x{:<6} {:<5} {}\n",
                          busy > 0 ? 100.0 * k.sum / busy : 0.0, FormatDuration(k.sum * u), k.count,
                          KernelClassName(k.cls).substr(0, 4), Shorten(t.strings.Get(k.name), 70));
    }
  }
  const LaunchStats& l = r.launch;
  const RankExtras& x = r.extras;
  *out += fmt::format(
      "  launches {} (short {}, delay p50 {}){}  syncs {} ({})  copies {} (pageable {} MiB)\n", l.n,
      l.short_kernels, FormatDuration(static_cast<int64_t>(l.delay_p50 * l.unit_ns)),
      l.graph_launches
          ? fmt::format(", {} graph launches -> {} kernels", l.graph_launches, l.graph_kernels)
          : "",
      x.syncs.count, FormatDuration(x.syncs.total_ns), FormatDuration(x.memcpy.total_ns),
      x.memcpy.pageable_bytes >> 20);
  if (!x.critical_path.rows.empty()) {
    const CriticalPath& cp = x.critical_path;
    *out += fmt::format("  critical path {} over {} events, bound by {}\n",
                        FormatDuration(cp.Length()), cp.rows.size(), cp.BoundBy());
  }
  if (!x.queue_length.streams.empty() || !x.memory_bw.kinds.empty()) {
    std::string line = "  ";
    const auto& qs = x.queue_length.streams;
    auto busiest = std::max_element(qs.begin(), qs.end(), [](const auto& a, const auto& b) {
      return a.stats.count < b.stats.count;
    });
    if (busiest != qs.end()) {
      line += fmt::format("launch queue (stream {}) avg {:.1f}, max {:.0f}", busiest->stream,
                          busiest->time_weighted_mean, busiest->stats.max);
    }
    for (size_t k = 0; k < x.memory_bw.kinds.size(); ++k) {
      const MemoryKindBandwidth& m = x.memory_bw.kinds[k];
      line += fmt::format("{}{} peak {:.3g} GB/s",
                          k == 0 ? (line.size() > 2 ? " · copies: " : "copies: ") : ", ", m.kind,
                          m.stats.max);
    }
    *out += line + "\n";
  }
  if (x.efficiency.compute_time > 0) {
    const Efficiency& e = x.efficiency;
    std::string line = fmt::format("  tensor cores {:.0f}% of compute", e.TensorCorePct());
    if (e.sm_efficiency_pct >= 0)
      line += fmt::format(", SM efficiency {:.0f}%", e.sm_efficiency_pct);
    if (e.occupancy_pct >= 0) line += fmt::format(", occupancy {:.0f}%", e.occupancy_pct);
    if (e.roofline_pct >= 0)
      line += fmt::format(", {:.1f}% of {} peak", e.roofline_pct, e.gpu_model);
    *out += line + "\n";
  }
  RenderRooflineText(r, out);
}

// A few lines on the cross-rank critical path (>= 2 ranks).
void RenderMultiRankPath(const Report& report, std::string* out) {
  const MultiRankCriticalPath& p = report.multi_path;
  if (report.ranks.size() < 2) return;
  if (!p.valid) {
    *out += "Cross-rank critical path: " + p.note + "\n\n";
    return;
  }
  int64_t len = p.Length();
  auto pct = [&](int64_t ns) { return len > 0 ? 100.0 * static_cast<double>(ns) / len : 0.0; };
  *out += fmt::format("Cross-rank critical path ({}): {}, bound by {}\n",
                      p.step >= 0 ? fmt::format("step {}", p.step) : "whole trace",
                      FormatDuration(len), p.BoundBy());
  std::string parts = " ";
  for (int c = 0; c < 5; ++c) {
    parts += fmt::format(" {} {:.0f}%", PathCategoryName(static_cast<PathCategory>(c)),
                         pct(p.by_category[c]));
  }
  *out += parts + "\n  on the path:";
  for (const RankPathShare& s : p.ranks) *out += fmt::format(" rank {} {:.0f}%", s.rank, s.pct);
  std::string offsets;
  for (size_t r = 1; r < p.matches.offset_ns.size(); ++r) {
    offsets += fmt::format(
        " rank {} {}", report.ranks[r].rank,
        p.matches.aligned[r] ? FormatDuration(p.matches.offset_ns[r]) : std::string("not aligned"));
  }
  *out += fmt::format(
      "\n  {} collectives matched; clocks aligned at the first shared collective's end:{}\n",
      p.matches.collectives.size(), offsets);
  if (!p.crossings.empty()) {
    auto worst = std::max_element(
        p.crossings.begin(), p.crossings.end(),
        [](const PathCrossing& a, const PathCrossing& b) { return a.wait_ns < b.wait_ns; });
    *out += fmt::format(
        "  crossed ranks {} times; longest: rank {} arrived last at {} ({} after rank {})\n",
        p.crossings.size(), report.ranks[worst->last_rank_index].rank,
        p.matches.collectives[worst->collective].Label(), FormatDuration(worst->wait_ns),
        report.ranks[worst->waiting_rank_index].rank);
  }
  if (!p.note.empty()) *out += "  note: " + p.note + "\n";
  *out += "\n";
}

}  // namespace

std::string FormatDuration(int64_t ns) {
  double a = static_cast<double>(ns < 0 ? -ns : ns);
  const char* sign = ns < 0 ? "-" : "";
  if (a >= 1e9) return fmt::format("{}{:.2f} s", sign, a / 1e9);
  if (a >= 1e6) return fmt::format("{}{:.2f} ms", sign, a / 1e6);
  if (a >= 1e3) return fmt::format("{}{:.2f} us", sign, a / 1e3);
  return fmt::format("{}{} ns", sign, static_cast<int64_t>(a));
}

std::string RenderTextSummary(const Report& report, const TextOptions& opt) {
  std::string out;
  uint64_t bytes = 0;
  for (const RankReport& r : report.ranks) bytes += r.trace->quality.bytes_read;
  out += fmt::format(
      "vigil analyze: {} rank(s), {:.1f} MB of trace JSON{}\n\n", report.ranks.size(),
      static_cast<double>(bytes) / 1e6,
      report.config.hta_compat ? " [--hta-compat: HTA's step dropping and rounding]" : "");
  for (size_t i = 0; i < report.ranks.size() && i < opt.max_ranks; ++i) {
    RenderRank(report.ranks[i], opt, &out);
    out += "\n";
  }
  if (report.ranks.size() > 1) {
    out += "Ranks (compute / comm / idle / mean step):\n";
    for (const RankSummary& s : report.cross.ranks) {
      out += fmt::format("  rank {:<4} {:>10} {:>10} {:>10} {:>10}\n", s.rank,
                         FormatDuration(s.compute_ns), FormatDuration(s.comm_ns),
                         FormatDuration(s.idle_ns), FormatDuration(s.step_ns));
    }
    out += "\n";
  }
  RenderMultiRankPath(report, &out);
  if (report.insights.empty()) {
    out += "Insights: none of the rules fired.\n";
  } else {
    out += fmt::format("Insights ({}):\n", report.insights.size());
    for (size_t i = 0; i < std::min(opt.max_insights, report.insights.size()); ++i) {
      const Insight& in = report.insights[i];
      out += fmt::format("  [{}] {}: {} (est. gain {:.1f}%)\n", SeverityName(in.severity), in.id,
                         in.title, in.estimated_gain_pct);
      out += "      " + in.detail + "\n";
      for (size_t k = 0; k < std::min<size_t>(2, in.evidence.size()); ++k) {
        const Evidence& e = in.evidence[k];
        out += fmt::format("      evidence: {} {} at {} us ({})\n", e.what, Shorten(e.name, 60),
                           e.ts_ns / 1000, FormatDuration(e.dur_ns));
      }
      out += "      fix: " + in.recommendation + "\n";
    }
  }
  std::string quality;
  for (const RankReport& r : report.ranks) {
    const DataQuality& q = r.trace->quality;
    if (q.truncated) {
      quality += fmt::format("  rank {}: TRUNCATED ({}); analysed the {} events read\n", r.rank,
                             q.truncation_detail, q.events_total);
    }
    if (q.gpu_without_launch + q.negative_durations + q.events_unparsable > 0) {
      quality += fmt::format(
          "  rank {}: {} GPU events without launch, {} negative durations, {} "
          "unparsable events\n",
          r.rank, q.gpu_without_launch, q.negative_durations, q.events_unparsable);
    }
    if (!q.unknown_categories.empty()) {
      quality +=
          fmt::format("  rank {}: {} unknown categories\n", r.rank, q.unknown_categories.size());
    }
  }
  out += "\nData quality: " + (quality.empty() ? std::string("ok\n") : "\n" + quality);
  return out;
}

}  // namespace vigil::trace
