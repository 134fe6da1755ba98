// SPDX-License-Identifier: Apache-2.0
// The HTML sections of the kernel categories and the CPU operator breakdown.
#include <algorithm>

#include <fmt/format.h>

#include "trace/report/html_report.h"
#include "trace/report/op_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

constexpr size_t kHtmlRows = 15;

// One horizontal bar per value, scaled to the largest.
std::string Bar(int64_t value, int64_t largest, const char* color) {
  const double w =
      largest > 0 ? 120.0 * static_cast<double>(value) / static_cast<double>(largest) : 0.0;
  return fmt::format(
      R"(<svg width="120" height="10"><rect width="{:.1f}" height="10" fill="{}"/></svg>)",
      std::max(0.0, w), color);
}

}  // namespace

std::string HtmlCpuOps(const RankReport& r) {
  const RankTrace& t = *r.trace;
  const OpAttribution& a = r.attribution;
  const CpuOpBreakdown& b = r.cpu_ops;
  std::string h;
  if (a.gpu_ns > 0) {
    h += "<h3>GPU time by kernel category</h3><table><tr><th>category</th><th "
         "class=num>events</th><th class=num>time</th><th></th></tr>";
    int64_t largest = 0;
    for (const CategoryTime& c : a.by_category) largest = std::max(largest, c.ns);
    for (int c = 0; c < kKernelCategoryCount; ++c) {
      const CategoryTime& ct = a.by_category[static_cast<size_t>(c)];
      if (ct.count == 0) continue;
      h += fmt::format(
          "<tr><td>{}</td><td class=num>{}</td><td class=num>{}</td><td>{} {:.1f}%</td></tr>",
          KernelCategoryName(static_cast<KernelCategory>(c)), ct.count, FormatDuration(ct.ns),
          Bar(ct.ns, largest, "#2e7d32"),
          100.0 * static_cast<double>(ct.ns) / static_cast<double>(a.gpu_ns));
    }
    h += "</table>";
  }
  if (b.ops.empty()) return h;
  h += fmt::format(
      "<h3>CPU operators</h3><p>{} calls of {} operators, {} busy on {} thread(s). Self time "
      "excludes nested operators; GPU is the time of the GPU work launched inside the "
      "operator.</p>",
      b.operator_events, b.ops.size(), FormatDuration(b.busy_ns), b.threads.size());
  h += "<table><tr><th>operator</th><th>category</th><th class=num>calls</th><th "
       "class=num>self</th><th class=num>total</th><th class=num>GPU</th><th></th></tr>";
  const int64_t top_self = b.ops.front().self_ns;
  for (size_t i = 0; i < std::min(kHtmlRows, b.ops.size()); ++i) {
    const OpStat& s = b.ops[i];
    h += fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td "
        "class=num>{}</td><td class=num>{}</td><td>{}</td></tr>",
        HtmlEscape(t.strings.Get(s.name)), KernelCategoryName(s.category), s.count,
        FormatDuration(s.self_ns), FormatDuration(s.total_ns), FormatDuration(s.gpu_inclusive_ns),
        Bar(s.self_ns, top_self, "#ef6c00"));
  }
  h += "</table>";
  if (b.modules.empty()) return h;
  h += "<h3>Modules and annotations</h3><table><tr><th>module</th><th class=num>calls</th><th "
       "class=num>total</th><th class=num>self</th><th class=num>GPU inside</th></tr>";
  for (size_t i = 0; i < std::min(kHtmlRows, b.modules.size()); ++i) {
    const ModuleStat& s = b.modules[i];
    h += fmt::format(
        "<tr><td><code>{}</code></td><td class=num>{}</td><td class=num>{}</td><td "
        "class=num>{}</td><td class=num>{}</td></tr>",
        HtmlEscape(t.strings.Get(s.name)), s.count, FormatDuration(s.total_ns),
        FormatDuration(s.self_ns), FormatDuration(s.gpu_inclusive_ns));
  }
  return h + "</table>";
}

}  // namespace vigil::trace
