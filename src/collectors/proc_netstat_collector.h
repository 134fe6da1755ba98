// SPDX-License-Identifier: Apache-2.0
// proc_netstat: IP, ICMP, UDP and UDP-Lite counters for IPv4 and IPv6, and the TCP error,
// SYN-cookie, timeout and out-of-order counters, from <proc>/net/snmp, <proc>/net/netstat and
// <proc>/net/snmp6 (the counters node_exporter's netstat collector exports by default that
// proc_netdev does not: proc_netdev keeps segments, opens, resets and listen drops).
// Stateless; owned by the daemon's collection sequence.
// No <proc>/net/snmp: NotFound (absent). No net/snmp6 (IPv6 disabled): the IPv6 series are left
// out. A missing net/netstat keeps the other samples and is DataLoss; so is a malformed file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcNetstatCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcNetstatCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

 private:
  // `samples_written`: a missing file is then a failure, not an absent source.
  Status CollectSections(std::string_view file, bool samples_written, MetricWriter& out);
  Status CollectSnmp6(MetricWriter& out);

  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
