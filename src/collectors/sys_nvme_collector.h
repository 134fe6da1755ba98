// SPDX-License-Identifier: Apache-2.0
// sys_nvme: one info series per NVMe controller from <sys>/class/nvme/nvme<N>/ (labels device,
// model, serial, firmware_revision, state, cntlid; Documentation/ABI/testing/sysfs-class-nvme and
// drivers/nvme/host/sysfs.c), as node_exporter's nvme collector. The controller state ("live",
// "resetting", "dead", ...) is re-read every tick; the identity files only when the listing is
// redone (every RescanSchedule ticks). Hosts without NVMe controllers are absent (NotFound).
#pragma once

#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysNvmeCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysNvmeCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

 private:
  struct Controller {
    std::string state_path;
    Labels labels;  // Everything but state.
  };
  Status Rescan();

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<Controller> controllers_;
};

}  // namespace vigil
