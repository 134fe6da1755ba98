// SPDX-License-Identifier: Apache-2.0
// sys_thermal: thermal zone temperatures and cooling device states from <sys>/class/thermal
// (Documentation/driver-api/thermal/sysfs-api.rst): thermal_zone<N>/temp in millidegree Celsius
// (labels zone N, type), cooling_device<N>/cur_state and max_state (labels device N, type).
// Hosts with neither zones nor cooling devices (most VMs) are absent (NotFound). The listing is
// kept and redone every RescanSchedule ticks; a tick reads one file per value.
#pragma once

#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysThermalCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysThermalCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

 private:
  Status Rescan();

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<PlannedValue> plan_;
};

}  // namespace vigil
