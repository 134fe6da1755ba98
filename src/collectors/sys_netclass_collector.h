// SPDX-License-Identifier: Apache-2.0
// sys_netclass: per network interface link attributes from <sys>/class/net/<iface>/
// (Documentation/ABI/testing/sysfs-class-net): speed, carrier and its changes, MTU, operstate,
// queue length, flags, type and an info series carrying address, broadcast, duplex, operstate
// and ifalias, as node_exporter's netclass collector; plus the statistics/ error kinds that
// /proc/net/dev folds into its errs, frame and carrier columns (sysfs-class-net-statistics: CRC,
// alignment, length, missed, over, aborted, carrier-sense, heartbeat, window; as node_exporter's
// netdev with enable-detailed-metrics). Every /proc/net/dev column stays with proc_netdev. The
// loopback interface "lo" is skipped, as proc_netdev skips it. Speed (Mbit/s) is exported in bytes
// per second; a link without carrier has no speed (the kernel answers -1 or EINVAL). The interface
// list is kept and redone every RescanSchedule ticks, or when an interface disappears.
#pragma once

#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysNetclassCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit SysNetclassCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

 private:
  struct Interface {
    std::string name;
    std::string dir;
    std::string address, broadcast, ifalias;  // Read at rescans.
  };
  struct IdentityValue {  // type, ifindex, iflink, dev_id, addr/name_assign_type.
    const MetricDesc* desc;
    double value;
    Labels labels;
  };
  Status Rescan();
  void CollectInfo(const Interface& iface, MetricWriter& out);

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<Interface> interfaces_;
  std::vector<PlannedValue> plan_;
  std::vector<IdentityValue> identity_;
};

}  // namespace vigil
