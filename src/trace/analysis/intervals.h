// SPDX-License-Identifier: Apache-2.0
// Interval helpers for the breakdowns: merge overlapping [start, end) spans, sum them, and sweep
// several classes at once to get the time covered by each combination. Header-only, pure.
// Owner: trace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
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

// The time the spans cover: TotalLength without the spans that end before they start (see
// SweepMasks), so it is never negative.
inline int64_t CoveredLength(const std::vector<Span>& merged) {
  int64_t sum = 0;
  for (const Span& s : merged) sum += std::max<int64_t>(0, s.second - s.first);
  return sum;
}

// The union of spans, merged as they are added: no copy and no sort when they come sorted by
// start (GpuView rows do, and so do subsets of them); out-of-order input is still right and pays
// one MergeSpans at the end.
class SpanUnion {
 public:
  void Add(int64_t start, int64_t end) {
    if (!spans_.empty() && start >= spans_.back().first) {
      if (start <= spans_.back().second) {
        spans_.back().second = std::max(spans_.back().second, end);
        return;
      }
    } else if (!spans_.empty()) {
      sorted_ = false;
    }
    spans_.emplace_back(start, end);
  }
  bool empty() const { return spans_.empty(); }
  // The merged spans, as MergeSpans returns them.
  std::vector<Span> Take() && {
    return sorted_ ? std::move(spans_) : MergeSpans(std::move(spans_));
  }

 private:
  std::vector<Span> spans_;
  bool sorted_ = true;
};

// Time covered by each mask of classes: `*classes[c]` are the merged spans of class c (bit 1<<c).
// Returns a vector indexed by mask (size 1 << classes). A k-way walk over the span boundaries:
// no copy of them, since the merged lists are each sorted and disjoint.
//
// A span may end before it starts: HTA rounds a sub-microsecond event's start up and its end down.
// HTA sweeps all boundaries in time order and counts only where the running sum of the classes'
// bits is positive, so such a span adds nothing and never yields a negative time; the sweep does
// the same, on a sorted copy of the boundaries (only traces rounded for --hta-compat have them).
inline std::vector<int64_t> SweepMasks(std::initializer_list<const std::vector<Span>*> classes) {
  const std::vector<const std::vector<Span>*> lists(classes);
  auto merged = [&](size_t c) -> const std::vector<Span>& { return *lists[c]; };
  const size_t n = lists.size();
  std::vector<int64_t> out(size_t{1} << n, 0);
  bool inverted = false;
  for (const std::vector<Span>* l : lists) {
    for (const Span& s : *l) inverted = inverted || s.second < s.first;
  }
  if (inverted) {
    std::vector<std::pair<int64_t, int>> bounds;  // (time, +bit at a start, -bit at an end)
    for (size_t c = 0; c < n; ++c) {
      for (const Span& s : merged(c)) {
        bounds.emplace_back(s.first, 1 << c);
        bounds.emplace_back(s.second, -(1 << c));
      }
    }
    std::sort(bounds.begin(), bounds.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    int sum = 0;
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      sum += bounds[k].second;
      if (sum > 0 && static_cast<size_t>(sum) < out.size()) {
        out[static_cast<size_t>(sum)] += bounds[k + 1].first - bounds[k].first;
      }
    }
    return out;
  }
  // Boundary b of class c: start of span b/2 when b is even, its end when odd.
  std::vector<size_t> next(n, 0);
  auto time_of = [&](size_t c) {
    const Span& s = merged(c)[next[c] / 2];
    return next[c] % 2 == 0 ? s.first : s.second;
  };
  auto earliest = [&]() {
    size_t best = n;
    for (size_t c = 0; c < n; ++c) {
      if (next[c] / 2 < merged(c).size() && (best == n || time_of(c) < time_of(best))) best = c;
    }
    return best;
  };
  int running = 0;
  for (size_t c = earliest(); c < n;) {
    const int64_t t = time_of(c);
    running += next[c] % 2 == 0 ? (1 << c) : -(1 << c);
    ++next[c];
    c = earliest();
    if (c < n && running > 0) out[static_cast<size_t>(running)] += time_of(c) - t;
  }
  return out;
}

}  // namespace vigil::trace
