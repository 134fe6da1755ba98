// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/trace_diff.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "trace/report/text_report.h"
#include "trace/results/report.h"

namespace vigil::trace {
namespace {

struct Totals {
  int64_t span = 0, compute = 0, idle = 0, comm = 0, step = 0;
  std::map<std::string, std::pair<int64_t, uint64_t>> kernels;
};

Totals Sum(const Report& r) {
  Totals t;
  int64_t steps = 0, step_sum = 0;
  for (const RankReport& rr : r.ranks) {
    const int64_t u = rr.unit_ns;
    t.span += rr.temporal.kernel_time * u;
    t.compute += rr.temporal.compute * u;
    t.idle += rr.temporal.idle * u;
    t.comm += rr.temporal.comm * u;
    for (const StepReport& s : rr.steps) {
      step_sum += s.dur;
      ++steps;
    }
    for (const KernelStat& k : rr.kernels.kernels) {
      auto& e = t.kernels[std::string(rr.trace->strings.Get(k.name))];
      e.first += k.sum * u;
      e.second += k.count;
    }
  }
  t.step = steps > 0 ? step_sum / steps : 0;
  return t;
}

std::string Delta(int64_t a, int64_t b) {
  double pct = a != 0 ? 100.0 * static_cast<double>(b - a) / static_cast<double>(a) : 0;
  return fmt::format("{:>12} -> {:>12}  ({:+.1f}%)", FormatDuration(a), FormatDuration(b), pct);
}

}  // namespace

TraceDiff DiffReports(const Report& base, const Report& test) {
  Totals a = Sum(base), b = Sum(test);
  TraceDiff d;
  d.base_span_ns = a.span;
  d.test_span_ns = b.span;
  d.base_compute_ns = a.compute;
  d.test_compute_ns = b.compute;
  d.base_idle_ns = a.idle;
  d.test_idle_ns = b.idle;
  d.base_comm_ns = a.comm;
  d.test_comm_ns = b.comm;
  d.base_step_ns = a.step;
  d.test_step_ns = b.step;
  std::map<std::string, KernelDelta> all;
  for (const auto& [name, v] : a.kernels) {
    KernelDelta& k = all[name];
    k.name = name;
    k.base_ns = v.first;
    k.base_count = v.second;
  }
  for (const auto& [name, v] : b.kernels) {
    KernelDelta& k = all[name];
    k.name = name;
    k.test_ns = v.first;
    k.test_count = v.second;
  }
  for (auto& [name, k] : all) d.kernels.push_back(std::move(k));
  std::sort(d.kernels.begin(), d.kernels.end(), [](const KernelDelta& x, const KernelDelta& y) {
    int64_t dx = std::llabs(x.test_ns - x.base_ns), dy = std::llabs(y.test_ns - y.base_ns);
    return dx != dy ? dx > dy : x.name < y.name;
  });
  if (d.kernels.size() > 20) d.kernels.resize(20);
  return d;
}

std::string RenderTraceDiff(const TraceDiff& d) {
  std::string out = "Trace diff (base -> test):\n";
  out += "  GPU span   " + Delta(d.base_span_ns, d.test_span_ns) + "\n";
  out += "  compute    " + Delta(d.base_compute_ns, d.test_compute_ns) + "\n";
  out += "  comm       " + Delta(d.base_comm_ns, d.test_comm_ns) + "\n";
  out += "  idle       " + Delta(d.base_idle_ns, d.test_idle_ns) + "\n";
  out += "  mean step  " + Delta(d.base_step_ns, d.test_step_ns) + "\n";
  out += "  kernels that changed most:\n";
  for (const KernelDelta& k : d.kernels) {
    std::string tag = k.base_count == 0 ? " [new]" : (k.test_count == 0 ? " [gone]" : "");
    std::string name = k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name;
    std::string delta = FormatDuration(k.test_ns - k.base_ns);
    if (k.test_ns >= k.base_ns) delta.insert(delta.begin(), '+');
    out +=
        fmt::format("    {:>12}  x{} -> x{}  {}{}\n", delta, k.base_count, k.test_count, name, tag);
  }
  return out;
}

}  // namespace vigil::trace
