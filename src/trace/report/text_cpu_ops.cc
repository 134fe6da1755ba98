// SPDX-License-Identifier: Apache-2.0
// The terminal lines of the kernel categories and the CPU operator breakdown.
#include <algorithm>

#include <fmt/format.h>

#include "trace/report/op_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

std::string Clip(std::string_view s, size_t max) {
  return s.size() <= max ? std::string(s) : std::string(s.substr(0, max - 3)) + "...";
}

}  // namespace

std::string RenderCpuOpsText(const RankReport& r, size_t top) {
  const RankTrace& t = *r.trace;
  const OpAttribution& a = r.attribution;
  const CpuOpBreakdown& b = r.cpu_ops;
  std::string out;
  if (a.gpu_ns > 0) {
    std::vector<int> order;
    for (int c = 0; c < kKernelCategoryCount; ++c) {
      if (a.by_category[static_cast<size_t>(c)].ns > 0) order.push_back(c);
    }
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return a.by_category[static_cast<size_t>(x)].ns > a.by_category[static_cast<size_t>(y)].ns;
    });
    out += "  GPU time by category:";
    for (int c : order) {
      out += fmt::format(" {} {:.1f}%", KernelCategoryName(static_cast<KernelCategory>(c)),
                         100.0 * static_cast<double>(a.by_category[static_cast<size_t>(c)].ns) /
                             static_cast<double>(a.gpu_ns));
    }
    out += fmt::format(
        " (of {}; {:.0f}% launched inside an operator{})\n", FormatDuration(a.gpu_ns),
        100.0 * static_cast<double>(b.gpu_attributed_ns) / static_cast<double>(a.gpu_ns),
        b.gpu_via_graph_ns > 0
            ? fmt::format(", {} replayed by graph launches", FormatDuration(b.gpu_via_graph_ns))
            : "");
  }
  if (b.ops.empty()) return out;
  out += fmt::format("  CPU operators: {} calls of {} operators, {} busy on {} thread(s)\n",
                     b.operator_events, b.ops.size(), FormatDuration(b.busy_ns), b.threads.size());
  out += fmt::format("    {:>10} {:>10} {:>8} {:>10}  {}\n", "self", "total", "calls", "GPU",
                     "operator");
  for (size_t i = 0; i < std::min(top, b.ops.size()); ++i) {
    const OpStat& s = b.ops[i];
    out += fmt::format("    {:>10} {:>10} {:>8} {:>10}  {}\n", FormatDuration(s.self_ns),
                       FormatDuration(s.total_ns), s.count,
                       s.gpu_inclusive_ns > 0 ? FormatDuration(s.gpu_inclusive_ns) : "-",
                       Clip(t.strings.Get(s.name), 70));
  }
  if (!b.modules.empty()) {
    out += "  modules (total, GPU inside):";
    for (size_t i = 0; i < std::min(top, b.modules.size()); ++i) {
      const ModuleStat& s = b.modules[i];
      out += fmt::format("{} {} {}{}", i == 0 ? "" : " ·", Clip(t.strings.Get(s.name), 50),
                         FormatDuration(s.total_ns),
                         s.gpu_inclusive_ns > 0
                             ? fmt::format(" (GPU {})", FormatDuration(s.gpu_inclusive_ns))
                             : "");
    }
    out += "\n";
  }
  return out;
}

}  // namespace vigil::trace
