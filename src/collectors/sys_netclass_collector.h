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
// On the daemon's own /sys the per-tick values come from one rtnetlink dump (rtnetlink_links.h),
// with the same semantics as the sysfs files (carrier and dormant only for a link that is up);
// only speed, duplex and flags (dev->flags, which the dump's ifi_flags is not) and the identity
// files netlink lacks are still read from sysfs. Other trees (tests, a host's /sys mounted in a
// container) are read through sysfs alone, and so is this /sys when netlink is refused or fails,
// or when it shows another network namespace than the daemon's (the same other names or indexes
// on three rescans in a row).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/rtnetlink_links.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

class SysNetclassCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  enum class Source { kAuto, kSysfs };  // kSysfs: never netlink (tests compare the two).
  explicit SysNetclassCollector(HostPaths paths, int rescan_every = RescanSchedule::kDefaultEvery,
                                Source source = Source::kAuto);
  Status Collect(MetricWriter& out) override;
  bool ReadsNetlink() const { return netlink_; }

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
  // Plans a per-tick attribute file, or reads an identity one now (its DataLoss into *error).
  // `Attr`: the .cc's table row.
  template <typename Attr>
  void AddAttribute(const Attr& a, const std::string& dir, const Labels& labels, Status* error);
  Status Rescan();
  void CollectInfo(const Interface& iface, MetricWriter& out);
  Status CollectSysfs(MetricWriter& out);
  // The sysfs part beside a dump: speed and flags planned, dev_id and the assign types read once.
  // *mismatch: what differs when sysfs lists other interfaces (or indexes) than the dump.
  Status RescanBeside(const std::vector<LinkAttributes>& links, std::string* mismatch);
  Status CollectNetlink(MetricWriter& out);
  // Reads sysfs alone from this tick on, and logs why once.
  Status FallBackToSysfs(std::string_view why, MetricWriter& out);
  void EmitLink(const LinkAttributes& link, const Interface& iface, MetricWriter& out);

  HostPaths paths_;
  SysfsReader reader_;
  RescanSchedule schedule_;
  std::vector<Interface> interfaces_;
  std::vector<PlannedValue> plan_;
  std::vector<IdentityValue> identity_;
  bool netlink_ = false;
  int namespace_mismatches_ = 0;  // Rescans in a row that found the same mismatch.
  std::string last_mismatch_;
  LinkDumper dumper_;
  std::vector<std::pair<int, std::string>> dumped_;  // (ifindex, name) the sysfs part is for.
};

}  // namespace vigil
