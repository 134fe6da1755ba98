// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/temporal_breakdown.h"

#include <algorithm>
#include <climits>

#include "trace/analysis/intervals.h"

namespace vigil::trace {

TemporalBreakdown ComputeTemporalBreakdown(const GpuView& v, const std::vector<size_t>* subset) {
  TemporalBreakdown r;
  // One union per class (KernelClass order); their sweep gives the union of all, so no
  // separate list of every span is kept.
  SpanUnion unions[4];
  int64_t first = INT64_MAX, last = INT64_MIN;
  auto visit = [&](size_t i) {
    const int64_t start = v.ts[i], end = v.end(i);
    first = std::min(first, start);
    last = std::max(last, end);
    unions[static_cast<size_t>(v.cls[i]) & 3].Add(start, end);
  };
  if (subset != nullptr) {
    for (size_t i : *subset) visit(i);
  } else {
    for (size_t i = 0; i < v.size(); ++i) visit(i);
  }
  if (first == INT64_MAX) return r;
  std::vector<Span> comp = std::move(unions[0]).Take(), comm = std::move(unions[1]).Take(),
                    mem = std::move(unions[2]).Take(), other = std::move(unions[3]).Take();
  const std::vector<int64_t> masks = SweepMasks({&comp, &comm, &mem, &other});
  int64_t busy = 0, exposed_comm = 0, exposed_memory = 0;
  for (size_t m = 1; m < masks.size(); ++m) {
    busy += masks[m];
    if ((m & 1) == 0 && (m & 2) != 0) exposed_comm += masks[m];    // comm, no compute
    if ((m & 1) == 0 && (m & 4) != 0) exposed_memory += masks[m];  // memory, no compute
  }
  // Spans that end before they start (HTA's rounding, see SweepMasks) count nothing in the sweep
  // but HTA's busy time merges all spans and sums their lengths, negative ones included.
  auto inverted = [](const std::vector<Span>& l) {
    return std::any_of(l.begin(), l.end(), [](const Span& s) { return s.second < s.first; });
  };
  if (inverted(comp) || inverted(comm) || inverted(mem) || inverted(other)) {
    std::vector<Span> all = comp;
    for (const std::vector<Span>* l : {&comm, &mem, &other})
      all.insert(all.end(), l->begin(), l->end());
    busy = TotalLength(MergeSpans(std::move(all)));
  }
  r.valid = true;
  r.kernel_time = last - first;
  r.idle = r.kernel_time - busy;
  r.compute = TotalLength(comp);
  r.non_compute = r.kernel_time - r.compute - r.idle;
  r.comm = TotalLength(comm);
  r.memory = CoveredLength(mem);
  r.exposed_comm = exposed_comm;
  r.exposed_memory = exposed_memory;
  return r;
}

std::vector<size_t> SelectLaunchedIn(const GpuView& v, int64_t from, int64_t to) {
  std::vector<size_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t t = v.launch_ts[i] != kNoTime ? v.launch_ts[i] : v.ts[i];
    if (t >= from && t < to) out.push_back(i);
  }
  return out;
}

}  // namespace vigil::trace
