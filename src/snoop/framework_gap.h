// SPDX-License-Identifier: Apache-2.0
// Memory the driver holds for a process that PyTorch's caching allocator is not using: the
// driver view's outstanding bytes minus the framework view's, per process and per device. The
// cached, reserved-but-unused part of the allocator's segments (plus any memory the process
// took outside the allocator). Shared by the JSON and text outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "snoop/snoop_summary.h"

namespace vigil::snoop {

struct DeviceGap {
  int device = 0;
  uint64_t bytes = 0;
};

// Driver minus framework outstanding, 0 when the framework's figure is the larger (its
// segments were allocated before the probes were attached).
inline uint64_t GapBytes(uint64_t driver, uint64_t framework) {
  return driver > framework ? driver - framework : 0;
}

inline uint64_t FrameworkGapBytes(const ProcessSummary& p) {
  return GapBytes(p.memory.outstanding_bytes, p.framework_memory.outstanding_bytes);
}

// One row per device either view has, ascending (both by_device lists are ascending).
inline std::vector<DeviceGap> FrameworkGapByDevice(const ProcessSummary& p) {
  std::vector<DeviceGap> out;
  const auto& d = p.memory.by_device;
  const auto& f = p.framework_memory.by_device;
  size_t i = 0, j = 0;
  while (i < d.size() || j < f.size()) {
    if (j == f.size() || (i < d.size() && d[i].device < f[j].device)) {
      out.push_back({d[i].device, d[i].outstanding_bytes});
      ++i;
    } else if (i == d.size() || f[j].device < d[i].device) {
      out.push_back({f[j].device, 0});
      ++j;
    } else {
      out.push_back({d[i].device, GapBytes(d[i].outstanding_bytes, f[j].outstanding_bytes)});
      ++i;
      ++j;
    }
  }
  return out;
}

}  // namespace vigil::snoop
