// SPDX-License-Identifier: Apache-2.0
// Interval helpers for the breakdowns: merge overlapping [start, end) spans, sum them, and sweep
// several classes at once to get the time covered by each combination. Header-only, pure.
// Owner: trace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace vigil::trace {

using Span = std::pair<int64_t, int64_t>;  // [start, end)

// Sorts by start and merges spans that overlap or touch (HTA: a new group only when a start is
// after the running maximum end).
inline std::vector<Span> MergeSpans(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

inline int64_t TotalLength(const std::vector<Span>& merged) {
  int64_t sum = 0;
  for (const Span& s : merged) sum += s.second - s.first;
  return sum;
}

// Time covered by each mask of classes: `merged[c]` are the merged spans of class c (bit 1<<c).
// Returns a vector indexed by mask (size 1 << classes).
inline std::vector<int64_t> SweepMasks(const std::vector<std::vector<Span>>& merged) {
  std::vector<std::pair<int64_t, int>> points;  // (time, +bit or -bit)
  for (size_t c = 0; c < merged.size(); ++c) {
    int bit = 1 << c;
    for (const Span& s : merged[c]) {
      points.emplace_back(s.first, bit);
      points.emplace_back(s.second, -bit);
    }
  }
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> out(size_t{1} << merged.size(), 0);
  int running = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    running += points[i].second;
    if (i + 1 < points.size() && running > 0) {
      out[static_cast<size_t>(running)] += points[i + 1].first - points[i].first;
    }
  }
  return out;
}

}  // namespace vigil::trace
