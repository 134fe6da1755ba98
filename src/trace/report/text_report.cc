// SPDX-License-Identifier: Apache-2.0
#include "trace/report/text_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/strings.h"
#include "trace/analyses.h"
#include "trace/model/data_problems.h"
#include "trace/report/display_names.h"
#include "trace/report/op_sections.h"
#include "trace/report/text_sections.h"
#include "trace/report/what_if_report.h"

namespace vigil::trace {
namespace {

void RenderRank(const RankReport& r, const TextOptions& opt, std::string* out) {
  const RankTrace& t = *r.trace;
  std::string device = t.meta.devices.empty() ? "" : t.meta.devices.front().name;
  *out +=
      fmt::format("Rank {}{}{} · {} steps{} · {}\n", r.rank, device.empty() ? "" : " · ", device,
                  t.links.steps.size(), r.view.steps_dropped ? " (last dropped)" : "", t.path);
  for (const RankAnalysis* a : RankAnalysesInTextOrder()) a->text(r, opt, out);
}

// The earliest event of `rank`'s trace (of the first rank when no rank has that number).
int64_t TraceStart(const Report& report, int32_t rank) {
  for (const RankReport& r : report.ranks) {
    if (r.rank == rank) return r.trace->links.first_ts;
  }
  return report.ranks.empty() ? 0 : report.ranks.front().trace->links.first_ts;
}

}  // namespace

void TextTemporal(const RankReport& r, const TextOptions&, std::string* out) {
  const int64_t u = r.unit_ns;
  const TemporalBreakdown& tb = r.temporal;
  if (!tb.valid && r.trace->quality.launches > 0) {
    *out += fmt::format(
        "  no GPU events captured ({} launches: GPU activity missing, see Data quality)\n",
        r.trace->quality.launches);
    return;
  }
  if (!tb.valid) {
    *out += "  no GPU work in this trace (CPU only)\n";
    return;
  }
  *out += fmt::format(
      "  GPU span {}: idle {:.1f}%  compute {:.1f}%  other {:.1f}%  (communication {}, exposed "
      "{}; memcpy {})\n",
      FormatDuration(tb.kernel_time * u), tb.Pct(tb.idle), tb.Pct(tb.compute),
      tb.Pct(tb.non_compute), FormatDuration(tb.comm * u), FormatDuration(tb.exposed_comm * u),
      FormatDuration(tb.memory * u));
}

void TextIdle(const RankReport& r, const TextOptions&, std::string* out) {
  if (!r.temporal.valid) return;
  int64_t idle = r.idle.host_wait + r.idle.kernel_wait + r.idle.other;
  auto ip = [&](int64_t x) { return idle > 0 ? 100.0 * x / idle : 0.0; };
  *out += fmt::format("  idle causes: host wait {:.0f}%  kernel wait {:.0f}%  other {:.0f}%\n",
                      ip(r.idle.host_wait), ip(r.idle.kernel_wait), ip(r.idle.other));
}

void TextKernels(const RankReport& r, const TextOptions& opt, std::string* out) {
  if (!r.temporal.valid) return;
  const RankTrace& t = *r.trace;
  const int64_t u = r.unit_ns;
  *out += "  top kernels:\n";
  int64_t busy = 0;
  for (const KernelStat& k : r.kernels.kernels) busy += k.sum;
  for (size_t i = 0; i < std::min(opt.top_kernels, r.kernels.kernels.size()); ++i) {
    const KernelStat& k = r.kernels.kernels[i];
    *out += fmt::format("    {:>5.1f}%  {:>10}  x{:<6} {:<13} {}\n",
                        busy > 0 ? 100.0 * k.sum / busy : 0.0, FormatDuration(k.sum * u), k.count,
                        ToLower(KernelClassName(k.cls)), opt.names->Get(t.strings.Get(k.name)));
  }
}

// One line for launches, syncs and copies together: what the CPU side did to the GPU.
void TextLaunch(const RankReport& r, const TextOptions&, std::string* out) {
  const LaunchStats& l = r.launch;
  *out += fmt::format(
      "  launches {} (short {}, delay p50 {}){}  syncs {} ({})  copies {} (pageable {} MiB)\n", l.n,
      l.short_kernels, FormatDuration(static_cast<int64_t>(l.delay_p50 * l.unit_ns)),
      l.graph_launches
          ? fmt::format(", {} graph launches -> {} kernels", l.graph_launches, l.graph_kernels)
          : "",
      r.syncs.count, FormatDuration(r.syncs.total_ns), FormatDuration(r.memcpy.total_ns),
      r.memcpy.pageable_bytes >> 20);
}

void TextCriticalPath(const RankReport& r, const TextOptions&, std::string* out) {
  const CriticalPath& cp = r.critical_path;
  if (cp.rows.empty()) return;
  const std::string bound = cp.BoundBy();  // "gpu_comm": the JSON's name; words here.
  *out +=
      fmt::format("  critical path {} over {} events, bound by {}\n", FormatDuration(cp.Length()),
                  cp.rows.size(), bound == "gpu_comm" ? "gpu_communication" : bound);
}

// The launch queue of the busiest stream and the peak bandwidth per copy kind, on one line.
void TextCounters(const RankReport& r, const TextOptions&, std::string* out) {
  if (r.queue_length.streams.empty() && r.memory_bw.kinds.empty()) return;
  std::string line = "  ";
  const auto& qs = r.queue_length.streams;
  auto busiest = std::max_element(qs.begin(), qs.end(), [](const auto& a, const auto& b) {
    return a.stats.count < b.stats.count;
  });
  if (busiest != qs.end()) {
    line += fmt::format("launch queue (stream {}) avg {:.1f}, max {:.0f}", busiest->stream,
                        busiest->time_weighted_mean, busiest->stats.max);
  }
  for (size_t k = 0; k < r.memory_bw.kinds.size(); ++k) {
    const MemoryKindBandwidth& m = r.memory_bw.kinds[k];
    line += fmt::format("{}{} peak {:.3g} GB/s",
                        k == 0 ? (line.size() > 2 ? " · copies: " : "copies: ") : ", ", m.kind,
                        m.stats.max);
  }
  *out += line + "\n";
}

void TextEfficiency(const RankReport& r, const TextOptions&, std::string* out) {
  const Efficiency& e = r.efficiency;
  if (e.compute_time <= 0) return;
  std::string line = fmt::format("  tensor cores {:.0f}% of compute", e.TensorCorePct());
  if (e.sm_efficiency_pct >= 0) line += fmt::format(", SM efficiency {:.0f}%", e.sm_efficiency_pct);
  if (e.occupancy_pct >= 0) line += fmt::format(", occupancy {:.0f}%", e.occupancy_pct);
  if (e.roofline_pct >= 0) line += fmt::format(", {:.1f}% of {} peak", e.roofline_pct, e.gpu_model);
  *out += line + "\n";
}

void TextCrossRank(const Report& report, const TextOptions&, std::string* out) {
  if (report.ranks.size() <= 1) return;
  *out += "Ranks (compute / communication / idle / mean step):\n";
  for (const RankSummary& s : report.cross.ranks) {
    *out += fmt::format("  rank {:<4} {:>10} {:>10} {:>10} {:>10}\n", s.rank,
                        FormatDuration(s.compute_ns), FormatDuration(s.comm_ns),
                        FormatDuration(s.idle_ns), FormatDuration(s.step_ns));
  }
  *out += "\n";
}

// A few lines on the cross-rank critical path (>= 2 ranks).
void TextMultiRankPath(const Report& report, const TextOptions&, std::string* out) {
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
  AppendMultiRankWhatIfText(report, out);
  if (!p.note.empty()) *out += "  note: " + p.note + "\n";
  *out += "\n";
}

std::string FormatDuration(int64_t ns) {
  double a = static_cast<double>(ns < 0 ? -ns : ns);
  const char* sign = ns < 0 ? "-" : "";
  if (a >= 1e9) return fmt::format("{}{:.2f} s", sign, a / 1e9);
  if (a >= 1e6) return fmt::format("{}{:.2f} ms", sign, a / 1e6);
  if (a >= 1e3) return fmt::format("{}{:.2f} us", sign, a / 1e3);
  return fmt::format("{}{} ns", sign, static_cast<int64_t>(a));
}

std::string FormatMicros(int64_t ns) {
  uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", a / 1000, a % 1000);
}

std::string RenderDataProblems(const Report& report) {
  std::string quality;
  for (const RankReport& r : report.ranks) {
    for (const DataProblem& p : FindDataProblems(*r.trace)) {
      quality += fmt::format("  rank {}: {}: {}\n", r.rank, p.id, p.detail);
      if (!p.affects.empty()) quality += "      invalidates: " + JoinAffected(p.affects) + "\n";
    }
  }
  return quality.empty() ? std::string("ok\n") : "\n" + quality;
}

std::string RenderTextSummary(const Report& report, const TextOptions& options) {
  std::string out;
  DisplayNames names(70);
  TextOptions opt = options;
  opt.names = &names;
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
  for (const ReportAnalysis& a : ReportAnalyses()) {
    if (a.text != nullptr) a.text(report, opt, &out);
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
        // From the start of the evidence's rank trace (the JSON has the trace clock's time).
        const Evidence& e = in.evidence[k];
        out += fmt::format("      evidence: {} {} at {} into the trace, for {}\n", e.what,
                           names.Get(e.name), FormatDuration(e.ts_ns - TraceStart(report, e.rank)),
                           FormatDuration(e.dur_ns));
      }
      out += "      fix: " + in.recommendation + "\n";
    }
    if (report.insights.size() > opt.max_insights) {
      out += fmt::format("  ... and {} more insights: --json or --html show all\n",
                         report.insights.size() - opt.max_insights);
    }
  }
  out += "\nData quality: " + RenderDataProblems(report);
  return out;
}

}  // namespace vigil::trace
