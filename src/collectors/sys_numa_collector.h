// SPDX-License-Identifier: Apache-2.0
// sys_numa: every field of each NUMA node's meminfo (<sys>/devices/system/node/node*/meminfo,
// kB to bytes; huge page counts as counts) and the node's allocation outcomes from numastat
// (numa_hit, numa_miss, numa_foreign, interleave_hit, local_node, other_node). proc_meminfo
// keeps its per-node total/free/used; this is the full view, off by default as node_exporter's
// meminfo_numa is. Stateless; owned by the daemon's collection sequence. No node directories
// (a kernel without NUMA support): NotFound (absent). A node without numastat keeps its meminfo
// samples; a malformed line is DataLoss.
#pragma once

#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class SysNumaCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysNumaCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  // Writes the samples of one node's meminfo ("Node 0 MemTotal:  13854492 kB" lines).
  static Status ParseMeminfo(std::string_view text, const std::string& node, MetricWriter& out);
  // Writes the samples of one node's numastat ("numa_hit 77568433" lines).
  static Status ParseNumastat(std::string_view text, const std::string& node, MetricWriter& out);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
