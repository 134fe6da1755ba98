// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/launch_bound.h"

#include <algorithm>
#include <map>

namespace vigil::trace {

LaunchBoundAnalysis AnalyzeLaunchBound(const GpuView& v, int64_t max_kernel, uint64_t min_run) {
  LaunchBoundAnalysis out;
  std::map<int64_t, std::vector<size_t>> by_stream;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v.is_kernel[i]) continue;
    by_stream[v.stream_of(i)].push_back(i);
    if (v.launch_ts[i] == kNoTime) continue;
    ++out.kernels;
    if (v.dur[i] < v.launch_dur[i]) {
      ++out.short_kernels;
      out.short_kernel_time += v.dur[i];
    }
  }
  for (auto& [stream, idx] : by_stream) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v.ts[a] < v.ts[b]; });
    LaunchBoundStretch cur;
    int64_t prev_end = kNoTime;
    auto flush = [&] {
      if (cur.kernels >= min_run) out.stretches.push_back(cur);
      cur = LaunchBoundStretch();
    };
    for (size_t i : idx) {
      // Launch-bound: the kernel is short and the GPU sat idle until its launch call ended.
      bool late = prev_end != kNoTime && v.launch_ts[i] != kNoTime &&
                  v.launch_ts[i] + v.launch_dur[i] > prev_end && v.ts[i] > prev_end;
      if (late) out.host_wait_gaps += v.ts[i] - prev_end;
      if (late && v.dur[i] <= max_kernel) {
        if (cur.kernels == 0) {
          cur.stream = stream;
          cur.start = prev_end;
        }
        ++cur.kernels;
        cur.end = v.end(i);
        cur.gpu_busy += v.dur[i];
      } else {
        flush();
      }
      prev_end = prev_end == kNoTime ? v.end(i) : std::max(prev_end, v.end(i));
    }
    flush();
  }
  std::sort(out.stretches.begin(), out.stretches.end(),
            [](const LaunchBoundStretch& a, const LaunchBoundStretch& b) {
              return a.end - a.start > b.end - b.start;
            });
  if (out.stretches.size() > 20) out.stretches.resize(20);
  return out;
}

}  // namespace vigil::trace
