// SPDX-License-Identifier: Apache-2.0
// proc_zoneinfo: per NUMA node and memory zone, from <proc>/zoneinfo: free, managed, present and
// spanned memory, the reclaim watermarks (min, low, high), the lowmem protection held against
// allocations for higher zones, and the NUMA allocation outcomes (hit, miss, foreign, interleave,
// local, other). The per-node page statistics the file also prints are /proc/vmstat's fields
// split by node and are not repeated here (sys_numa has the node's meminfo). Off by default, as
// in node_exporter. Stateless; owned by the daemon's collection sequence. A missing file is
// NotFound (absent); a value that is not a number is DataLoss.
#pragma once

#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcZoneinfoCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  // `page_size` converts pages to bytes; 0 means this host's page size.
  explicit ProcZoneinfoCollector(HostPaths paths, double page_size = 0);
  Status Collect(MetricWriter& out) override;

  // Writes the samples of <proc>/zoneinfo text.
  static Status Parse(std::string_view text, double page_size, MetricWriter& out);

 private:
  HostPaths paths_;
  double page_size_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
