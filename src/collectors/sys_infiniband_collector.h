// SPDX-License-Identifier: Apache-2.0
// sys_infiniband: per InfiniBand (and RoCE) port traffic, error counters, state and link rate from
// <sys>/class/infiniband/<device>/ports/<port>/ (labels device, port). port_xmit_data and
// port_rcv_data count 4-byte words (IBTA PortCounters, "divided by 4"), so they are multiplied by
// 4 to give bytes. Hosts without InfiniBand have no <sys>/class/infiniband: Collect() then
// returns NotFound and the collector is reported absent. A counter file a driver does not provide
// is skipped. Every other file in counters/ goes to one family labelled `counter` with the file's
// name, as does every driver-specific counter in hw_counters/ (per port, and per device where the
// driver has device-wide ones: mlx5 RoCE congestion and retransmit counters, AWS EFA traffic and
// RDMA counters); `lifespan` (the refresh interval, not a counter) is skipped. An info series
// carries board_id, fw_ver and hca_type. The device/port/file listing is kept and redone every
// RescanSchedule ticks or when a file vanishes; a tick reads one small file per value. Owned by
// the daemon's collection sequence.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysInfinibandCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysInfinibandCollector(HostPaths paths,
                                  int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

  // "4: ACTIVE" -> 4 (1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER); also phys_state
  // "5: LinkUp" -> 5 (1 Sleep, 2 Polling, 3 Disabled, ... 7 PhyTest). DataLoss otherwise.
  static StatusOr<int> ParseState(std::string_view text);
  // "100 Gb/sec (4X EDR)" -> 12.5e9 bytes per second. DataLoss otherwise.
  static StatusOr<double> ParseRate(std::string_view text);

 private:
  struct Port {
    std::string dir;
    Labels labels;
  };
  struct Info {
    Labels labels;
  };
  Status Rescan();
  void PlanPort(const std::string& device, const std::string& port);
  void PlanHwCounters(const std::string& dir, const Labels& labels, const MetricDesc& desc);
  Status CollectPortState(const Port& port, MetricWriter& out);

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<PlannedValue> plan_;
  std::vector<Port> ports_;
  std::vector<Info> info_;
};

}  // namespace vigil
