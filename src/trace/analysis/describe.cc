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

}  // namespace

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
