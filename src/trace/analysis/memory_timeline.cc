// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/memory_timeline.h"

#include <algorithm>
#include <map>

namespace vigil::trace {

std::vector<DeviceMemory> AnalyzeMemoryTimeline(const RankTrace& t, size_t max_points) {
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_device;  // rows of t.memory
  for (uint32_t i = 0; i < t.memory.size(); ++i) {
    const MemoryEvent m = t.memory[i];
    by_device[{m.device_type, m.device_id}].push_back(i);
  }
  std::vector<DeviceMemory> out;
  for (auto& [key, rows] : by_device) {
    std::stable_sort(rows.begin(), rows.end(),
                     [&](uint32_t a, uint32_t b) { return t.memory.ts(a) < t.memory.ts(b); });
    const std::vector<uint32_t>& evs = rows;  // this device's events in time order
    auto at = [&](size_t k) { return t.memory[evs[k]]; };
    DeviceMemory d;
    d.device_type = key.first;
    d.device_id = key.second;
    d.events = evs.size();
    for (size_t k = 0; k < evs.size(); ++k) {
      const MemoryEvent m = at(k);
      if (m.total_allocated > d.peak_allocated) {
        d.peak_allocated = m.total_allocated;
        d.peak_ts = m.ts;
      }
      d.peak_reserved = std::max(d.peak_reserved, m.total_reserved);
    }
    if (d.device_type == 1) {
      for (const DeviceProps& p : t.meta.devices) {
        if (p.id == d.device_id && p.total_memory > 0) d.capacity = p.total_memory;
      }
    }
    if (d.capacity > 0) {
      d.peak_pct = 100.0 * static_cast<double>(std::max(d.peak_reserved, d.peak_allocated)) /
                   static_cast<double>(d.capacity);
    }
    size_t window = std::max<size_t>(1, (evs.size() + max_points - 1) / max_points);
    for (size_t k = 0; k < evs.size(); k += window) {
      MemoryPoint p{at(k).ts, 0, 0};
      for (size_t j = k; j < std::min(evs.size(), k + window); ++j) {
        const MemoryEvent m = at(j);
        p.allocated = std::max(p.allocated, m.total_allocated);
        p.reserved = std::max(p.reserved, m.total_reserved);
      }
      d.points.push_back(p);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace vigil::trace
