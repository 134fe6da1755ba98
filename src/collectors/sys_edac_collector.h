// SPDX-License-Identifier: Apache-2.0
// sys_edac: memory error counts from <sys>/devices/system/edac/mc/mc<N>/
// (Documentation/admin-guide/ras.rst): correctable and uncorrectable errors per memory controller
// (ce_count, ue_count), per chip-select row (csrow<M>/ce_count, ue_count; the errors the driver
// could not place, ce_noinfo_count and ue_noinfo_count, as csrow "unknown", as node_exporter does)
// and per DIMM where the driver has the newer dimm<M>/ layout (dimm_ce_count, dimm_ue_count,
// labelled with dimm_label). Hosts without an EDAC driver (VMs) are absent (NotFound). The
// listing is kept and redone every RescanSchedule ticks.
#pragma once

#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysEdacCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysEdacCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

 private:
  Status Rescan();

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<PlannedValue> plan_;
};

}  // namespace vigil
