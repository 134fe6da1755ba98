// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/roofline_replay.h"

#include <algorithm>
#include <map>

namespace vigil::trace {

int64_t ReplayedLengthStandIn(const GpuView& v, std::span<const size_t> rows) {
  struct Open {
    int64_t start = 0, end = 0, busy = 0;
    bool any = false;
  };
  std::map<int32_t, Open> devices;
  for (size_t i : rows) {  // view order is start order
    Open& d = devices[v.events->device[v.row[i]]];
    if (!d.any || v.ts[i] > d.end) {
      d.busy += d.end - d.start;
      d.start = v.ts[i];
      d.end = v.end(i);
      d.any = true;
    } else {
      d.end = std::max(d.end, v.end(i));
    }
  }
  int64_t total = 0;
  for (const auto& [device, d] : devices) total += d.busy + (d.end - d.start);
  return total;
}

int64_t DeviceWallTime(const GpuView& v, std::span<const size_t> rows) {
  std::map<int32_t, std::pair<int64_t, int64_t>> span;
  for (size_t i : rows) {
    auto [it, inserted] = span.emplace(v.events->device[v.row[i]], std::pair{v.ts[i], v.end(i)});
    if (!inserted) {
      it->second.first = std::min(it->second.first, v.ts[i]);
      it->second.second = std::max(it->second.second, v.end(i));
    }
  }
  int64_t total = 0;
  for (const auto& [device, s] : span) total += s.second - s.first;
  return total;
}

}  // namespace vigil::trace
