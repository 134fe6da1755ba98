// SPDX-License-Identifier: Apache-2.0
// proc_buddyinfo: free memory blocks per NUMA node, zone and order (a block of order k is 2^k
// pages) from <proc>/buddyinfo: how fragmented free memory is. Off by default, as in
// node_exporter. Stateless; owned by the daemon's collection sequence. A missing file is
// NotFound (absent); a line that is not "Node N, zone NAME counts..." is DataLoss.
#pragma once

#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcBuddyinfoCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcBuddyinfoCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  // Writes the samples of <proc>/buddyinfo text.
  static Status Parse(std::string_view text, MetricWriter& out);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
