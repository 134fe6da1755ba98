// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/trace_diff.h"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "trace/report/text_report.h"
#include "trace/results/report.h"

namespace vigil::trace {
namespace {

struct Totals {
  int64_t span = 0, compute = 0, idle = 0, comm = 0, step = 0;
  std::map<std::string, std::pair<int64_t, uint64_t>> kernels;
  std::array<std::pair<int64_t, uint64_t>, kKernelCategoryCount> categories{};
  std::map<std::pair<KernelCategory, std::string>, std::pair<int64_t, uint64_t>> operators;
};

// GPU time by (category, launching operator) over every GPU event of the rank.
void SumOperators(const RankReport& rr, Totals* t) {
  const RankTrace& trace = *rr.trace;
  const OpAttribution& a = rr.attribution;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t dur = trace.events.dur[trace.links.gpu[i]];
    const uint32_t op = a.op[i];
    std::string name =
        op == kNoIndex ? std::string() : std::string(trace.strings.Get(trace.events.name[op]));
    auto& e = t->operators[{a.category[i], std::move(name)}];
    e.first += dur;
    ++e.second;
  }
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    t->categories[c].first += a.by_category[c].ns;
    t->categories[c].second += a.by_category[c].count;
  }
}

int64_t AbsDelta(int64_t base, int64_t test) { return std::llabs(test - base); }

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
    SumOperators(rr, &t);
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
  auto describe = [](const Report& r, std::string* device, std::string* runtime) {
    if (r.ranks.empty()) return;
    const TraceMeta& m = r.ranks.front().trace->meta;
    *device = m.devices.empty() ? std::string() : m.devices.front().name;
    *runtime = m.runtime_family;
  };
  describe(base, &d.base_device, &d.base_runtime);
  describe(test, &d.test_device, &d.test_runtime);
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
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    if (a.categories[c].second + b.categories[c].second == 0) continue;
    d.categories.push_back(CategoryDelta{static_cast<KernelCategory>(c), a.categories[c].first,
                                         b.categories[c].first, a.categories[c].second,
                                         b.categories[c].second});
  }
  std::map<std::pair<KernelCategory, std::string>, OperatorDelta> ops;
  for (const auto& [key, v] : a.operators) {
    OperatorDelta& o = ops[key];
    o.base_ns = v.first;
    o.base_count = v.second;
  }
  for (const auto& [key, v] : b.operators) {
    OperatorDelta& o = ops[key];
    o.test_ns = v.first;
    o.test_count = v.second;
  }
  for (auto& [key, o] : ops) {
    o.category = key.first;
    o.op = key.second;
    if (o.base_count > 0 && o.test_count > 0) {
      ++d.operators_matched;
      d.matched_base_ns += o.base_ns;
      d.matched_test_ns += o.test_ns;
    } else if (o.base_count > 0) {
      ++d.operators_base_only;
    } else {
      ++d.operators_test_only;
    }
    d.operators.push_back(std::move(o));
  }
  std::sort(
      d.operators.begin(), d.operators.end(), [](const OperatorDelta& x, const OperatorDelta& y) {
        const int64_t dx = AbsDelta(x.base_ns, x.test_ns), dy = AbsDelta(y.base_ns, y.test_ns);
        if (dx != dy) return dx > dy;
        if (x.category != y.category) return x.category < y.category;
        return x.op < y.op;
      });
  if (d.operators.size() > 20) d.operators.resize(20);
  return d;
}

std::string RenderTraceDiff(const TraceDiff& d) {
  auto signed_duration = [](int64_t ns) {
    std::string s = FormatDuration(ns);
    if (ns >= 0) s.insert(s.begin(), '+');
    return s;
  };
  auto side = [](const std::string& device, const std::string& runtime) {
    if (device.empty() && runtime.empty()) return std::string("?");
    return device.empty() ? runtime : (runtime.empty() ? device : device + ", " + runtime);
  };
  std::string out =
      fmt::format("Trace diff (base -> test): {} -> {}\n", side(d.base_device, d.base_runtime),
                  side(d.test_device, d.test_runtime));
  out += "  GPU span   " + Delta(d.base_span_ns, d.test_span_ns) + "\n";
  out += "  compute    " + Delta(d.base_compute_ns, d.test_compute_ns) + "\n";
  out += "  comm       " + Delta(d.base_comm_ns, d.test_comm_ns) + "\n";
  out += "  idle       " + Delta(d.base_idle_ns, d.test_idle_ns) + "\n";
  out += "  mean step  " + Delta(d.base_step_ns, d.test_step_ns) + "\n";
  if (!d.categories.empty()) {
    out += "  GPU time by kernel category:\n";
    for (const CategoryDelta& c : d.categories) {
      out += fmt::format("    {:<14}{}  x{} -> x{}\n", KernelCategoryName(c.category),
                         Delta(c.base_ns, c.test_ns), c.base_count, c.test_count);
    }
  }
  if (!d.operators.empty()) {
    out += fmt::format(
        "  GPU work that changed most, matched by category and launching operator ({} matched, "
        "{} only in base, {} only in test):\n",
        d.operators_matched, d.operators_base_only, d.operators_test_only);
    for (const OperatorDelta& o : d.operators) {
      std::string tag = o.base_count == 0 ? " [new]" : (o.test_count == 0 ? " [gone]" : "");
      out +=
          fmt::format("    {:>12}  x{} -> x{}  {:<13} {}{}\n",
                      signed_duration(o.test_ns - o.base_ns), o.base_count, o.test_count,
                      KernelCategoryName(o.category), o.op.empty() ? "(no operator)" : o.op, tag);
    }
  }
  if (!d.SameVendor()) {
    out += fmt::format(
        "  kernels by name: not compared ({} vs {} kernels are named by different libraries; "
        "see the operators above)\n",
        d.base_runtime.empty() ? "unknown" : d.base_runtime,
        d.test_runtime.empty() ? "unknown" : d.test_runtime);
    return out;
  }
  out += "  kernels that changed most:\n";
  for (const KernelDelta& k : d.kernels) {
    std::string tag = k.base_count == 0 ? " [new]" : (k.test_count == 0 ? " [gone]" : "");
    std::string name = k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name;
    out += fmt::format("    {:>12}  x{} -> x{}  {}{}\n", signed_duration(k.test_ns - k.base_ns),
                       k.base_count, k.test_count, name, tag);
  }
  return out;
}

}  // namespace vigil::trace
