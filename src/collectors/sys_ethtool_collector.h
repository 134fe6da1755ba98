// SPDX-License-Identifier: Apache-2.0
// sys_ethtool (opt-in): the NIC driver's own statistics, what `ethtool -S <iface>` prints, read
// with the SIOCETHTOOL ioctl (ETHTOOL_GDRVINFO for the driver and the number of statistics,
// ETHTOOL_GSTRINGS for their names, ETHTOOL_GSTATS for the values; include/uapi/linux/ethtool.h).
// One family labelled interface and statistic (the driver's name, e.g. rx_out_of_buffer or
// rx_queue_0_packets), and an info series with driver, version, firmware and bus. Interfaces are
// those of <sys>/class/net with a device (virtual interfaces have no driver statistics); ones
// whose driver answers EOPNOTSUPP are skipped. Names are fetched only when the interface list is
// redone (every RescanSchedule ticks, or when a driver's count changes); a tick is one GSTATS
// ioctl per interface into a reused buffer. Opt-in because per-queue statistics of a many-queue
// NIC are thousands of series. No interface with statistics: absent (NotFound).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

// The ioctl seam. Call() issues SIOCETHTOOL for `ifname` with `data`, a struct ethtool_* whose
// first u32 is the command; the status maps errno (EOPNOTSUPP -> Unimplemented).
class EthtoolIoctl {
 public:
  virtual ~EthtoolIoctl() = default;
  virtual Status Call(const std::string& ifname, void* data) = 0;
};
// SIOCETHTOOL on an AF_INET datagram socket opened here (no privilege needed for reads).
StatusOr<std::unique_ptr<EthtoolIoctl>> MakeSocketEthtoolIoctl();

class SysEthtoolCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  static constexpr uint32_t kMaxStats = 1 << 16;  // Larger answers are DataLoss.

  // `ioctl` null: open the socket on the first Collect().
  SysEthtoolCollector(HostPaths paths, std::unique_ptr<EthtoolIoctl> ioctl,
                      int rescan_every = RescanSchedule::kDefaultEvery);
  Status Collect(MetricWriter& out) override;

 private:
  struct Interface {
    std::string name;
    uint32_t n_stats = 0;
    std::vector<Labels> labels;  // One per statistic: interface, statistic.
    Labels info;
  };
  Status Rescan();
  Status Describe(const std::string& name, Interface* iface);

  HostPaths paths_;
  std::unique_ptr<EthtoolIoctl> ioctl_;
  RescanSchedule schedule_;
  std::vector<Interface> interfaces_;
  // The kernel writes as many names and values as the driver has now, whatever count the caller
  // passes (net/ethtool/ioctl.c ethtool_get_strings, ethtool_get_stats), so a driver reloaded
  // with more statistics between two ioctls would overrun a buffer sized for the old count.
  // Both have room for kMaxStats: allocated once and left uninitialised, so the pages the
  // kernel never writes cost no memory.
  std::unique_ptr<uint64_t[]> stats_buf_;  // struct ethtool_stats, then the u64 values.
  std::unique_ptr<char[]> strings_buf_;    // struct ethtool_gstrings, then the names.
};

}  // namespace vigil
