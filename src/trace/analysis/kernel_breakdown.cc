// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/kernel_breakdown.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "trace/analysis/intervals.h"

namespace vigil::trace {
namespace {

constexpr KernelClass kTypes[] = {KernelClass::kCompute, KernelClass::kComm, KernelClass::kMemory};

std::string MaskName(size_t mask) {
  std::string out;
  for (size_t c = 0; c < 3; ++c) {
    if ((mask & (size_t{1} << c)) == 0) continue;
    if (!out.empty()) out += " overlapping ";
    out += KernelClassName(kTypes[c]);
  }
  return out;
}

struct Acc {
  uint64_t n = 0;
  double sum = 0, max = -1e300, min = 1e300, sumsq = 0;
  void Add(double x) {
    ++n;
    sum += x;
    sumsq += x * x;
    max = std::max(max, x);
    min = std::min(min, x);
  }
  double Mean() const { return n ? sum / static_cast<double>(n) : 0; }
  double Std() const {
    if (n < 2) return 0;
    double m = Mean();
    double var = (sumsq - static_cast<double>(n) * m * m) / static_cast<double>(n - 1);
    return var > 0 ? std::sqrt(var) : 0;
  }
};

// pandas Series.quantile (linear interpolation).
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

KernelBreakdown ComputeKernelBreakdown(const GpuView& v, const StringTable& strings,
                                       int top_kernels, double duration_ratio) {
  KernelBreakdown out;
  SpanUnion unions[3];
  std::unordered_map<uint64_t, size_t> index;  // (name, class) -> kernels
  std::vector<Acc> durations;                  // per kernel
  for (size_t i = 0; i < v.size(); ++i) {
    size_t c = static_cast<size_t>(v.cls[i]);
    if (c < 3) unions[c].Add(v.ts[i], v.end(i));
    uint64_t key = (static_cast<uint64_t>(v.name_of(i)) << 2) | c;
    auto [it, inserted] = index.emplace(key, out.kernels.size());
    if (inserted) {
      KernelStat s;
      s.name = v.name_of(i);
      s.cls = v.cls[i];
      s.min = v.dur[i];
      s.max = v.dur[i];
      out.kernels.push_back(s);
      durations.emplace_back();
    }
    KernelStat& s = out.kernels[it->second];
    ++s.count;
    s.sum += v.dur[i];
    s.min = std::min(s.min, v.dur[i]);
    s.max = std::max(s.max, v.dur[i]);
    durations[it->second].Add(static_cast<double>(v.dur[i]));
  }
  for (size_t k = 0; k < out.kernels.size(); ++k) {
    out.kernels[k].mean = durations[k].Mean();
    out.kernels[k].stddev = durations[k].Std();
  }
  durations = {};
  std::sort(out.kernels.begin(), out.kernels.end(), [&](const KernelStat& a, const KernelStat& b) {
    return a.sum != b.sum ? a.sum > b.sum : strings.Get(a.name) < strings.Get(b.name);
  });
  // Time by class combination.
  std::vector<std::vector<Span>> spans;
  for (SpanUnion& u : unions) spans.push_back(std::move(u).Take());
  std::vector<int64_t> masks = SweepMasks({&spans[0], &spans[1], &spans[2]});
  int64_t total = 0;
  for (size_t m = 1; m < masks.size(); ++m) {
    if (masks[m] == 0 && spans[0].size() + spans[1].size() + spans[2].size() == 0) continue;
    bool present = true;
    for (size_t c = 0; c < 3; ++c) {
      if ((m & (size_t{1} << c)) != 0 && spans[c].empty()) present = false;
    }
    if (!present || (masks[m] == 0 && __builtin_popcountll(m) > 1)) continue;
    out.types.push_back({MaskName(m), masks[m], 0});
    total += masks[m];
  }
  for (auto& t : out.types) {
    t.pct = total > 0 ? std::round(1000.0 * static_cast<double>(t.sum) / total) / 10.0 : 0;
  }
  std::stable_sort(out.types.begin(), out.types.end(),
                   [](const KernelTypeTime& a, const KernelTypeTime& b) { return a.sum > b.sum; });
  // HTA's top-N aggregation, per class.
  for (KernelClass cls : kTypes) {
    std::vector<const KernelStat*> ks;
    for (const KernelStat& s : out.kernels) {
      if (s.cls == cls) ks.push_back(&s);
    }
    if (ks.empty()) continue;
    std::vector<std::string> names(ks.size());
    for (size_t k = 0; k < ks.size(); ++k) names[k] = std::string(strings.Get(ks[k]->name));
    if (ks.size() <= static_cast<size_t>(top_kernels)) {
      // Few kernels: HTA reports each kernel's own duration statistics.
      std::vector<size_t> order(ks.size());
      for (size_t k = 0; k < ks.size(); ++k) order[k] = k;
      std::sort(order.begin(), order.end(),
                [&](size_t a, size_t b) { return names[a] < names[b]; });
      for (size_t k : order) {
        const KernelStat& s = *ks[k];
        out.top.push_back({names[k], cls, s.count, static_cast<double>(s.sum),
                           static_cast<double>(s.max), static_cast<double>(s.min), s.mean,
                           s.stddev});
      }
      continue;
    }
    {
      std::vector<double> cum(ks.size());
      double run = 0;
      for (size_t k = 0; k < ks.size(); ++k) cum[k] = run += static_cast<double>(ks[k]->sum);
      double q = Quantile(cum, duration_ratio);
      for (size_t k = 0; k < ks.size(); ++k) {
        if (cum[k] > q || k >= static_cast<size_t>(top_kernels)) names[k] = "others";
      }
    }
    std::map<std::string, std::pair<Acc, uint64_t>> groups;
    for (size_t k = 0; k < ks.size(); ++k) {
      auto& g = groups[names[k]];
      g.first.Add(static_cast<double>(ks[k]->sum));
      g.second += ks[k]->count;
    }
    for (auto& [name, g] : groups) {
      const Acc& a = g.first;
      out.top.push_back({name, cls, g.second, a.sum, a.max, a.min, a.Mean(), a.Std()});
    }
  }
  return out;
}

}  // namespace vigil::trace
