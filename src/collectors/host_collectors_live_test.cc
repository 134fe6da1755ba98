// SPDX-License-Identifier: Apache-2.0
// Runs every host collector on this machine's own /proc and /sys: each must succeed (or report
// its source absent, for PSI, InfiniBand, conntrack, schedstat, NUMA and the hardware sources a
// VM lacks) and produce plausible values.
#include <net/if.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/clock_time_collector.h"
#include "collectors/collector_context.h"
#include "collectors/host_os_collector.h"
#include "collectors/host_test_util.h"
#include "collectors/proc_arp_collector.h"
#include "collectors/proc_buddyinfo_collector.h"
#include "collectors/proc_conntrack_collector.h"
#include "collectors/proc_cpu_collector.h"
#include "collectors/proc_diskstats_collector.h"
#include "collectors/proc_interrupts_collector.h"
#include "collectors/proc_loadavg_collector.h"
#include "collectors/proc_mdstat_collector.h"
#include "collectors/proc_meminfo_collector.h"
#include "collectors/proc_netdev_collector.h"
#include "collectors/proc_netstat_collector.h"
#include "collectors/proc_pressure_collector.h"
#include "collectors/proc_schedstat_collector.h"
#include "collectors/proc_sockstat_collector.h"
#include "collectors/proc_softnet_collector.h"
#include "collectors/proc_sys_collector.h"
#include "collectors/proc_udp_collector.h"
#include "collectors/proc_vmstat_collector.h"
#include "collectors/proc_zoneinfo_collector.h"
#include "collectors/statvfs_filesystem_collector.h"
#include "collectors/sys_cpufreq_collector.h"
#include "collectors/sys_edac_collector.h"
#include "collectors/sys_ethtool_collector.h"
#include "collectors/sys_hwmon_collector.h"
#include "collectors/sys_infiniband_collector.h"
#include "collectors/sys_netclass_collector.h"
#include "collectors/sys_numa_collector.h"
#include "collectors/sys_nvme_collector.h"
#include "collectors/sys_thermal_collector.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::MustFind;

TEST(HostCollectorsLiveTest, EveryCollectorRunsOnThisHost) {
  const CollectorInfo* infos[] = {
      &ProcCpuCollector::kInfo,           &ProcDiskstatsCollector::kInfo,
      &ProcLoadavgCollector::kInfo,       &ProcMeminfoCollector::kInfo,
      &ProcNetdevCollector::kInfo,        &ProcPressureCollector::kInfo,
      &StatvfsFilesystemCollector::kInfo, &SysInfinibandCollector::kInfo,
      &ClockTimeCollector::kInfo,         &HostOsCollector::kInfo,
      &ProcConntrackCollector::kInfo,     &ProcNetstatCollector::kInfo,
      &ProcSchedstatCollector::kInfo,     &ProcSockstatCollector::kInfo,
      &ProcSoftnetCollector::kInfo,       &ProcSysCollector::kInfo,
      &ProcVmstatCollector::kInfo,        &ProcBuddyinfoCollector::kInfo,
      &ProcInterruptsCollector::kInfo,    &ProcZoneinfoCollector::kInfo,
      &SysNumaCollector::kInfo,           &ProcArpCollector::kInfo,
      &ProcUdpCollector::kInfo,           &ProcMdstatCollector::kInfo,
      &SysCpufreqCollector::kInfo,        &SysEdacCollector::kInfo,
      &SysEthtoolCollector::kInfo,        &SysHwmonCollector::kInfo,
      &SysNetclassCollector::kInfo,       &SysNvmeCollector::kInfo,
      &SysThermalCollector::kInfo,
  };
  // Sources a VM or container may lack: PSI, InfiniBand, conntrack (module not loaded),
  // schedstat (CONFIG_SCHEDSTATS), NUMA nodes and the hardware sources; the network classes exist
  // wherever /sys does.
  const CollectorInfo* may_be_absent_infos[] = {
      &ProcPressureCollector::kInfo,  &SysInfinibandCollector::kInfo,
      &ProcConntrackCollector::kInfo, &ProcSchedstatCollector::kInfo,
      &SysNumaCollector::kInfo,       &ProcMdstatCollector::kInfo,
      &SysCpufreqCollector::kInfo,    &SysEdacCollector::kInfo,
      &SysEthtoolCollector::kInfo,    &SysHwmonCollector::kInfo,
      &SysNvmeCollector::kInfo,       &SysThermalCollector::kInfo};
  // Families whose values may be negative (offsets from a reference).
  auto may_be_negative = [](std::string_view name) {
    return name == "vigil_host_time_zone_offset_seconds" ||
           name == "vigil_host_timex_offset_seconds" ||
           name == "vigil_host_timex_pps_frequency_ratio";
  };
  const CollectorContext context;  // The real /proc and /sys.
  for (const CollectorInfo* info : infos) {
    SCOPED_TRACE(info->name);
    std::unique_ptr<Collector> collector = info->create(context);
    ASSERT_NE(collector, nullptr);

    auto r = CollectOnce(*collector);

    bool may_be_absent = false;
    for (const CollectorInfo* absent : may_be_absent_infos) {
      may_be_absent = may_be_absent || absent == info;
    }
    if (may_be_absent && IsAbsent(r.status)) {
      continue;
    }
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    if (info != &ProcArpCollector::kInfo) {  // An empty ARP table has no samples.
      EXPECT_GT(r.batch.samples.size(), 0u);
    }
    for (const Sample& s : r.batch.samples) {
      bool listed = false;
      for (const MetricDesc* desc : info->metrics) {
        listed = listed || desc == s.desc;
      }
      EXPECT_TRUE(listed) << s.desc->name << " is not in CollectorInfo::metrics";
      if (!may_be_negative(s.desc->name) &&
          s.desc->unit != "celsius") {  // Sensors may read below freezing.
        EXPECT_GE(s.value, 0) << s.desc->name;
      }
    }
  }
}

TEST(HostCollectorsLiveTest, ValuesArePlausible) {
  ProcCpuCollector cpu(HostPaths{});
  ProcMeminfoCollector mem(HostPaths{});
  ProcLoadavgCollector load(HostPaths{});

  auto c1 = CollectOnce(cpu);
  auto c2 = CollectOnce(cpu);
  auto m = CollectOnce(mem);
  auto l = CollectOnce(load);

  ASSERT_TRUE(c1.status.ok() && c2.status.ok() && m.status.ok() && l.status.ok());
  EXPECT_GE(CountSamples(c1.batch, "vigil_host_cpu_seconds_total"), 16u);  // "all" + 1 CPU.
  const double total = MustFind(m.batch, "vigil_host_memory_total_bytes");
  EXPECT_GT(total, 64.0 * 1024 * 1024);
  EXPECT_LE(MustFind(m.batch, "vigil_host_memory_available_bytes"), total);
  EXPECT_LE(MustFind(m.batch, "vigil_host_memory_used_bytes"), total);
  EXPECT_GE(MustFind(l.batch, "vigil_host_tasks"), 1);
  EXPECT_GT(MustFind(c1.batch, "vigil_host_boot_time_seconds"), 1e9);
  for (const Sample& s : c2.batch.samples) {
    if (s.desc->name == "vigil_host_cpu_utilization_ratio") {
      EXPECT_LE(s.value, 1.0);
    }
  }
}

// Interface indexes from sysfs agree with the kernel's name lookup (if_nametoindex).
TEST(HostCollectorsLiveTest, NetclassIndexesMatchTheKernel) {
  SysNetclassCollector netclass(HostPaths{});

  auto r = CollectOnce(netclass);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  size_t checked = 0;
  for (const Sample& s : r.batch.samples) {
    if (s.desc->name == "vigil_host_network_iface_id") {
      const std::string name(LabelValue(s.labels, "interface"));
      EXPECT_EQ(s.value, if_nametoindex(name.c_str())) << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

// Every series as "name{labels} value", sorted, for comparing two collections.
std::vector<std::string> Rows(const MetricBatch& batch) {
  std::vector<std::string> rows;
  for (const Sample& s : batch.samples) {
    std::string row(s.desc->name);
    for (const auto& [key, value] : s.labels) {
      row += " " + key + "=" + value;
    }
    rows.push_back(row + " " + std::to_string(s.value));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The rtnetlink dump gives what the sysfs files give: the same series with the same values, read
// one after the other (a few tries, in case a counter moved in between).
TEST(HostCollectorsLiveTest, NetclassFromNetlinkMatchesSysfs) {
  SysNetclassCollector netlink(HostPaths{});
  SysNetclassCollector sysfs(HostPaths{}, RescanSchedule::kDefaultEvery,
                             SysNetclassCollector::Source::kSysfs);
  if (!netlink.ReadsNetlink()) {
    GTEST_SKIP() << "rtnetlink is refused here; sys_netclass reads sysfs alone";
  }
  ASSERT_FALSE(sysfs.ReadsNetlink());
  std::vector<std::string> from_netlink, from_sysfs;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto a = CollectOnce(netlink);
    auto b = CollectOnce(sysfs);
    ASSERT_TRUE(a.status.ok()) << a.status.message();
    ASSERT_TRUE(b.status.ok()) << b.status.message();
    from_netlink = Rows(a.batch);
    from_sysfs = Rows(b.batch);
    if (from_netlink == from_sysfs) {
      break;
    }
  }
  EXPECT_FALSE(from_sysfs.empty());
  EXPECT_EQ(from_netlink, from_sysfs);
  EXPECT_TRUE(netlink.ReadsNetlink());  // No error made it fall back.
}

// In a network namespace of its own the daemon's dump has only lo while /sys (mounted by the
// host) still lists the host's interfaces: the collector must see that and read sysfs alone,
// exporting what the sysfs-only collector does. Needs CAP_SYS_ADMIN (CI runs as root).
TEST(HostCollectorsLiveTest, NetclassInAnotherNetworkNamespaceThanSysReadsSysfs) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // As root a network namespace alone; otherwise inside a user namespace of its own.
    if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
      _exit(77);
    }
    SysNetclassCollector netlink(HostPaths{});
    SysNetclassCollector sysfs(HostPaths{}, RescanSchedule::kDefaultEvery,
                               SysNetclassCollector::Source::kSysfs);
    if (!netlink.ReadsNetlink()) {
      _exit(78);
    }
    for (int tick = 0; tick < 4; ++tick) {  // Every tick, the mismatch's first ones included.
      bool same = false;
      for (int attempt = 0; attempt < 5 && !same; ++attempt) {  // A counter may move between.
        auto a = CollectOnce(netlink);
        auto b = CollectOnce(sysfs);
        if (!a.status.ok() || !b.status.ok()) {
          _exit(10 + tick);
        }
        same = !Rows(a.batch).empty() && Rows(a.batch) == Rows(b.batch);
      }
      if (!same) {
        _exit(10 + tick);
      }
    }
    _exit(netlink.ReadsNetlink() ? 2 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    GTEST_SKIP() << "no new network namespace here (neither as root nor in a user namespace)";
  }
  if (WEXITSTATUS(status) == 78) {
    GTEST_SKIP() << "rtnetlink is refused here";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: still on netlink after 4 ticks; 10+N: tick N differed from sysfs or failed";
}

uint64_t ReadCounter(const std::string& path) {
  std::ifstream in(path);
  uint64_t v = 0;
  in >> v;
  return v;
}

// "rx_queue_3_packets" or "rx3_packets" -> "packets"; empty for other names.
std::string_view RxQueueSuffix(std::string_view stat) {
  for (std::string_view prefix : {"rx_queue_", "rx"}) {
    if (!stat.starts_with(prefix)) {
      continue;
    }
    std::string_view rest = stat.substr(prefix.size());
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
      ++digits;
    }
    if (digits > 0 && digits < rest.size() && rest[digits] == '_') {
      return rest.substr(digits + 1);
    }
  }
  return {};
}

// The driver's statistics are paired with the right names: per-queue receive counters add up to
// the driver's own totals (virtio_net: rx0_kicks and rx_kicks) and per-queue packet counts to the
// interface total the kernel reports in sysfs, read just before and just after.
TEST(HostCollectorsLiveTest, EthtoolPerQueueStatisticsAddUp) {
  const std::string iface = "eth0";
  const std::string total = "/sys/class/net/" + iface + "/statistics/rx_packets";
  const uint64_t before = ReadCounter(total);
  SysEthtoolCollector ethtool(HostPaths{}, nullptr);
  auto r = CollectOnce(ethtool);
  const uint64_t after = ReadCounter(total);
  if (IsAbsent(r.status)) {
    GTEST_SKIP() << "no driver statistics here: " << r.status.message();
  }
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::map<std::string, double> totals;     // "rx_<suffix>" as the driver reports it.
  std::map<std::string, double> per_queue;  // Sum over queues of "rx<N>_<suffix>".
  for (const Sample& s : r.batch.samples) {
    const std::string_view stat = LabelValue(s.labels, "statistic");
    if (LabelValue(s.labels, "interface") != iface || stat.empty()) {
      continue;
    }
    const std::string_view suffix = RxQueueSuffix(stat);
    if (!suffix.empty()) {
      per_queue[std::string(suffix)] += s.value;
    } else if (stat.starts_with("rx_")) {
      totals[std::string(stat.substr(3))] = s.value;
    }
  }
  size_t checked = 0;
  for (const auto& [suffix, sum] : per_queue) {
    if (suffix == "packets") {
      EXPECT_GE(sum, static_cast<double>(before));
      EXPECT_LE(sum, static_cast<double>(after));
      ++checked;
    }
    auto it = totals.find(suffix);
    if (it != totals.end()) {
      EXPECT_NEAR(sum, it->second, 10 + it->second / 100) << suffix;  // Traffic during the call.
      ++checked;
    }
  }
  if (checked == 0) {
    GTEST_SKIP() << iface << "'s driver has no per-queue receive statistics with totals";
  }
}

}  // namespace
}  // namespace vigil
