// SPDX-License-Identifier: Apache-2.0
#include "trace/report/text_report.h"

#include <algorithm>

#include <fmt/format.h>

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
