// SPDX-License-Identifier: Apache-2.0
// sys_hwmon: hardware monitoring chips from <sys>/class/hwmon/hwmon*/ (and the older layout with
// the attributes under hwmon*/device/): temperatures, fan speeds, voltages, currents, power,
// energy and alarm flags (Documentation/hwmon/sysfs-interface.rst), labelled chip and sensor
// ("temp1"). The chip name is built as node_exporter builds it, so dashboards port unchanged:
// "<bus>_<device>" from where hwmon*/device points (platform_coretemp_0), else the `name` file,
// else "hwmonN". Values are converted from the interface's milli/micro units to base units.
// Hosts without <sys>/class/hwmon entries are absent (NotFound). The directory listing is kept
// and redone every RescanSchedule ticks; a tick reads one small file per sensor value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysHwmonCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysHwmonCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

  // The chip label of <dir> (a hwmon* directory), as node_exporter's hwmonName().
  static std::string ChipName(const std::string& dir);
  // Lower-cases and turns every character outside [a-z0-9:_] into '_', trimming '_' at the ends.
  static std::string CleanName(std::string_view text);

 private:
  struct InfoSample {
    const MetricDesc* desc;
    Labels labels;
  };
  Status Rescan();
  void PlanDir(const std::string& dir, const std::string& chip);

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<PlannedValue> plan_;
  std::vector<InfoSample> info_;
};

}  // namespace vigil
