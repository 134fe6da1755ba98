// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/idle_time.h"

#include <algorithm>
#include <map>

namespace vigil::trace {
namespace {

void Add(IdleStats* s, int64_t gap) {
  if (s->count == 0) {
    s->min = s->max = gap;
  } else {
    s->min = std::min(s->min, gap);
    s->max = std::max(s->max, gap);
  }
  ++s->count;
  s->time += gap;
  s->mean = static_cast<double>(s->time) / static_cast<double>(s->count);
}

}  // namespace

IdleBreakdown ComputeIdleBreakdown(const GpuView& v, int64_t threshold, bool hta) {
  std::map<int64_t, std::vector<size_t>> by_stream;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.is_kernel[i]) by_stream[v.stream_of(i)].push_back(i);
  }
  IdleBreakdown out;
  for (auto& [stream, idx] : by_stream) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v.ts[a] < v.ts[b]; });
    StreamIdle s;
    s.stream = stream;
    int64_t prev_end = v.end(idx[0]);
    for (size_t k = 1; k < idx.size(); ++k) {
      size_t i = idx[k];
      int64_t gap = v.ts[i] - prev_end;
      bool host_wait = v.launch_ts[i] != kNoTime && v.launch_ts[i] > prev_end;
      if (hta) {
        if (host_wait) {
          Add(&s.host_wait, gap);
        } else if (gap < threshold) {
          Add(&s.kernel_wait, gap);
        } else {
          Add(&s.other, gap);
        }
        prev_end = v.end(i);
        continue;
      }
      if (gap > 0) {
        if (host_wait) {
          Add(&s.host_wait, gap);
        } else if (gap < threshold) {
          Add(&s.kernel_wait, gap);
        } else {
          Add(&s.other, gap);
        }
      }
      prev_end = std::max(prev_end, v.end(i));
    }
    out.host_wait += s.host_wait.time;
    out.kernel_wait += s.kernel_wait.time;
    out.other += s.other.time;
    out.streams.push_back(s);
  }
  return out;
}

}  // namespace vigil::trace
