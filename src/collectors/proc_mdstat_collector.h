// SPDX-License-Identifier: Apache-2.0
// proc_mdstat: Linux software RAID (md) arrays from <proc>/mdstat (drivers/md/md.c md_seq_show):
// per array its state (active, inactive, or the running sync action: recovering, resync, check,
// reshape), member disks by state (active, failed, spare, down), disks the level requires, size
// and how far the running sync action is, as node_exporter's mdadm collector. mdstat counts 1 KiB
// blocks; Vigil exports bytes. No <proc>/mdstat (md not loaded) or no arrays: absent (NotFound).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcMdstatCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcMdstatCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Array {
    std::string_view name;        // "md0"; points into the parsed text.
    std::string_view state;       // active, inactive, recovering, resync, check, reshape.
    uint64_t disks_total = 0;     // Members listed on the array line.
    uint64_t disks_failed = 0;    // Members marked (F).
    uint64_t disks_spare = 0;     // Members marked (S).
    uint64_t disks_required = 0;  // n of [n/m]; members minus failed and spares without it.
    uint64_t disks_active = 0;    // m of [n/m]; the same without it.
    uint64_t disks_down = 0;      // '_' in [UU_U].
    uint64_t blocks = 0;          // 1 KiB blocks.
    uint64_t blocks_synced = 0;   // Equal to blocks unless a sync action runs.
    double sync_ratio = 1;        // Done / total of the running sync action (x/y), else 1.
  };
  // DataLoss on an array without a size line or a malformed bracket or progress field.
  static StatusOr<std::vector<Array>> Parse(std::string_view text);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
