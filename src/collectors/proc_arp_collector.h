// SPDX-License-Identifier: Apache-2.0
// proc_arp: IPv4 neighbour (ARP) table entries per interface from <proc>/net/arp. Stateless;
// owned by the daemon's collection sequence. A missing file is NotFound (absent); a line with
// fewer than the six columns is DataLoss.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcArpCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcArpCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  // Entries per device, in first-seen order, into `*out` (cleared first).
  static Status Parse(std::string_view text,
                      std::vector<std::pair<std::string_view, uint64_t>>* out);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  std::vector<std::pair<std::string_view, uint64_t>> counts_;
};

}  // namespace vigil
