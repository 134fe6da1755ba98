// SPDX-License-Identifier: Apache-2.0
// sys_cpufreq: per-CPU frequency and its limits from <sys>/devices/system/cpu/cpu<N>/cpufreq/
// (Documentation/admin-guide/pm/cpufreq.rst; values in kHz, exported in hertz): the hardware's
// view (cpuinfo_cur_freq, readable by root only, and cpuinfo_min/max_freq), the governor's view
// (scaling_cur/min/max_freq) and the governor in use, as one series per available governor with
// 1 on the active one. Hosts without cpufreq (most VMs) are absent (NotFound). The CPU list is
// kept and redone every RescanSchedule ticks; a tick reads one file per value.
#pragma once

#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysCpufreqCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysCpufreqCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

 private:
  struct Governors {
    std::string cpu;
    std::string current_path;
    std::vector<std::string> available;
  };
  Status Rescan();

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<PlannedValue> plan_;
  std::vector<Governors> governors_;
};

}  // namespace vigil
