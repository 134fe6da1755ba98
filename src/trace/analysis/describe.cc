// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/describe.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vigil::trace {
namespace {

// numpy's default ("linear") percentile of sorted values.
double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// The same percentile when the sorted values are a histogram.
double Quantile(const std::map<int64_t, uint64_t>& counts, uint64_t n, double q) {
  double pos = q * static_cast<double>(n - 1);
  uint64_t lo = static_cast<uint64_t>(std::floor(pos));
  uint64_t hi = std::min(lo + 1, n - 1);
  auto value_at = [&](uint64_t k) {  // the k-th smallest value
    for (const auto& [value, count] : counts) {
      if (k < count) return static_cast<double>(value);
      k -= count;
    }
    return static_cast<double>(counts.rbegin()->first);
  };
  double a = value_at(lo), b = value_at(hi);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

}  // namespace

Describe DescribeCounts(const std::map<int64_t, uint64_t>& counts) {
  Describe d;
  double sum = 0;
  for (const auto& [value, count] : counts) {
    d.count += count;
    sum += static_cast<double>(value) * static_cast<double>(count);
  }
  if (d.count == 0) return d;
  d.mean = sum / static_cast<double>(d.count);
  if (d.count > 1) {
    double ss = 0;
    for (const auto& [value, count] : counts) {
      double dev = static_cast<double>(value) - d.mean;
      ss += dev * dev * static_cast<double>(count);
    }
    d.std = std::sqrt(ss / static_cast<double>(d.count - 1));
  } else {
    d.std = std::numeric_limits<double>::quiet_NaN();
  }
  d.min = static_cast<double>(counts.begin()->first);
  d.max = static_cast<double>(counts.rbegin()->first);
  d.p25 = Quantile(counts, d.count, 0.25);
  d.p50 = Quantile(counts, d.count, 0.50);
  d.p75 = Quantile(counts, d.count, 0.75);
  return d;
}

Describe DescribeValues(std::vector<double> v) {
  Describe d;
  if (v.empty()) return d;
  d.count = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - d.mean) * (x - d.mean);
    d.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
  } else {
    d.std = std::numeric_limits<double>::quiet_NaN();
  }
  std::sort(v.begin(), v.end());
  d.min = v.front();
  d.max = v.back();
  d.p25 = Quantile(v, 0.25);
  d.p50 = Quantile(v, 0.50);
  d.p75 = Quantile(v, 0.75);
  return d;
}

}  // namespace vigil::trace
