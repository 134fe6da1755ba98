// SPDX-License-Identifier: Apache-2.0
// sys_infiniband: per InfiniBand (and RoCE) port traffic, error counters, state and link rate from
// <sys>/class/infiniband/<device>/ports/<port>/ (labels device, port). port_xmit_data and
// port_rcv_data count 4-byte words (IBTA PortCounters, "divided by 4"), so they are multiplied by
// 4 to give bytes. Hosts without InfiniBand have no <sys>/class/infiniband: Collect() then
// returns NotFound and the collector is reported absent. A counter file a driver does not provide
// is skipped. Owned by the daemon's collection sequence; keeps only a reused read buffer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "collectors/collector.h"

namespace vigil {

class SysInfinibandCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysInfinibandCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  // "4: ACTIVE" -> 4 (1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER). DataLoss otherwise.
  static StatusOr<int> ParseState(std::string_view text);
  // "100 Gb/sec (4X EDR)" -> 12.5e9 bytes per second. DataLoss otherwise.
  static StatusOr<double> ParseRate(std::string_view text);

 private:
  Status CollectPort(const std::string& device, const std::string& port, MetricWriter& out);

  HostPaths paths_;
  std::string buf_;
};

}  // namespace vigil
