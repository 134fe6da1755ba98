// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "trace/analysis/roofline_math.h"
#include "trace/report/html_report.h"
#include "trace/report/roofline_report.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

constexpr size_t kChartShapes = 200;
constexpr int kWidth = 640, kHeight = 360, kLeft = 60, kBottom = 36, kTop = 12, kRight = 16;

// Log-log axes: decades of arithmetic intensity (x) and FLOP/s (y).
struct Axes {
  double x0, x1, y0, y1;
  double X(double v) const {
    return kLeft + (std::log10(v) - x0) / (x1 - x0) * (kWidth - kLeft - kRight);
  }
  double Y(double v) const {
    return kHeight - kBottom - (std::log10(v) - y0) / (y1 - y0) * (kHeight - kBottom - kTop);
  }
};

std::string Chart(const RankReport& r) {
  const Roofline& x = r.roofline;
  const RankTrace& t = *r.trace;
  const double peak = x.main_peak_flops_per_s, bw = x.memory_bandwidth_bytes_per_s;
  double ai_min = peak / bw, ai_max = peak / bw, f_min = peak;
  int64_t total = 0;
  size_t n = std::min(kChartShapes, x.shapes.size());
  for (size_t i = 0; i < n; ++i) {
    const RooflineShape& s = x.shapes[i];
    if (s.flops <= 0 || s.bytes <= 0 || s.kernel_ns <= 0) continue;
    ai_min = std::min(ai_min, s.flops / s.bytes);
    ai_max = std::max(ai_max, s.flops / s.bytes);
    f_min = std::min(f_min, s.flops / (s.kernel_ns * 1e-9));
    total += s.kernel_ns;
  }
  if (total == 0) return "<p>No modelled operator does floating-point work.</p>";
  const Axes a{std::floor(std::log10(ai_min)) - 0.5, std::ceil(std::log10(ai_max)) + 0.5,
               std::floor(std::log10(f_min)) - 0.5, std::log10(peak) + 0.5};
  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img">)", kWidth, kHeight);
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#fafafa"/>)", kLeft, kTop,
                     kWidth - kLeft - kRight, kHeight - kBottom - kTop);
  for (int d = static_cast<int>(std::ceil(a.x0)); d <= static_cast<int>(a.x1); ++d) {
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="10" text-anchor="middle">1e{}</text>)",
                       a.X(std::pow(10.0, d)), kHeight - kBottom + 14, d);
  }
  for (int d = static_cast<int>(std::ceil(a.y0)); d <= static_cast<int>(a.y1); ++d) {
    svg += fmt::format(R"(<text x="{}" y="{:.1f}" font-size="10" text-anchor="end">1e{}</text>)",
                       kLeft - 4, a.Y(std::pow(10.0, d)) + 3, d);
  }
  svg += fmt::format(
      R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>)",
      (kWidth + kLeft) / 2, kHeight - 4);
  svg += fmt::format(R"svg(<text x="12" y="{}" font-size="11" transform="rotate(-90 12 {})" )svg"
                     R"svg(text-anchor="middle">achieved FLOP/s</text>)svg",
                     kHeight / 2, kHeight / 2);
  // The roofs: memory (bandwidth x intensity) up to the ridge point, then the compute peak.
  const double lo = std::pow(10.0, a.x0), hi = std::pow(10.0, a.x1), ridge = peak / bw;
  const double start = std::max(lo, std::pow(10.0, a.y0) / bw);
  svg += fmt::format(
      R"(<polyline fill="none" stroke="#c62828" stroke-width="2" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)",
      a.X(start), a.Y(start * bw), a.X(ridge), a.Y(peak), a.X(hi), a.Y(peak));
  for (size_t i = n; i-- > 0;) {  // largest drawn last, on top
    const RooflineShape& s = x.shapes[i];
    if (s.flops <= 0 || s.bytes <= 0 || s.kernel_ns <= 0) continue;
    const double ai = s.flops / s.bytes, f = s.flops / (s.kernel_ns * 1e-9);
    const double radius = 3 + 15 * std::sqrt(static_cast<double>(s.kernel_ns) / total);
    const RankTrace& st = s.source != nullptr ? *s.source : t;  // a graph capture's, or ours
    const OpShapes* in = s.shapes < st.op_shapes.size() ? &st.op_shapes[s.shapes] : nullptr;
    svg += fmt::format(
        R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="#1565c0" fill-opacity="0.45" stroke="#0d47a1"><title>{} {} · {} · {} kernel time · {:.1f}% of roofline ({})</title></circle>)",
        a.X(ai), a.Y(f), radius, HtmlEscape(st.strings.Get(s.name)),
        HtmlEscape(in ? st.shape_text.Get(in->dims).substr(0, 200) : ""), s.peak,
        FormatDuration(s.kernel_ns), 100.0 * s.roofline_ns / s.kernel_ns,
        RooflineBoundName(KernelRoofline(s.flops, s.bytes, static_cast<double>(s.kernel_ns),
                                         s.peak_flops_per_s, bw)
                              .bound));
  }
  svg += "</svg><div class=legend><span><i class=sw style=\"background:#c62828\"></i>";
  svg += fmt::format("roofs: {:.3g} TB/s memory, {} {:.4g} TFLOP/s</span>", bw / 1e12, x.main_peak,
                     peak / 1e12);
  return svg +
         "<span><i class=sw style=\"background:#1565c0\"></i>operator shapes, area by "
         "kernel time</span></div>";
}

}  // namespace

std::string HtmlRoofline(const RankReport& r) {
  const Roofline& x = r.roofline;
  if (!x.computed || x.rank.kernels == 0) return "";
  const RooflineTotals& t = x.rank;
  std::string h = "<h3>Roofline</h3>";
  if (t.modelled_kernels == 0) {
    return h + "<p>No kernel has a work model (the trace needs record_shapes=True).</p>";
  }
  if (!t.has_peaks || x.main_peak_flops_per_s <= 0 || x.memory_bandwidth_bytes_per_s <= 0) {
    return h + fmt::format(
                   "<p>The GPU is not in the peak table; {:.0f}% of kernel time has a "
                   "work model.</p>",
                   100 * t.Coverage());
  }
  h += fmt::format(
      "<p>{:.1f}% of roofline over the replayed device time ({:.1f}% of wall time); {:.0f}% of "
      "kernel time has a work model (the rest keeps its measured time). {}.</p>",
      t.PctOfReplayed(), t.PctOfWall(), 100 * t.Coverage(), HtmlEscape(x.gpu_model));
  return h + Chart(r);
}

}  // namespace vigil::trace
