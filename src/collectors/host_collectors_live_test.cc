// SPDX-License-Identifier: Apache-2.0
// Runs every host collector on this machine's own /proc and /sys: each must succeed (or report
// its source absent where many hosts lack it) and produce plausible values.
#include <memory>
#include <string_view>

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
#include "collectors/sys_infiniband_collector.h"
#include "collectors/sys_numa_collector.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::MustFind;

TEST(HostCollectorsLiveTest, EveryCollectorRunsOnThisHost) {
  const CollectorInfo* infos[] = {&ProcCpuCollector::kInfo,
                                  &ProcDiskstatsCollector::kInfo,
                                  &ProcLoadavgCollector::kInfo,
                                  &ProcMeminfoCollector::kInfo,
                                  &ProcNetdevCollector::kInfo,
                                  &ProcPressureCollector::kInfo,
                                  &StatvfsFilesystemCollector::kInfo,
                                  &SysInfinibandCollector::kInfo,
                                  &ClockTimeCollector::kInfo,
                                  &HostOsCollector::kInfo,
                                  &ProcConntrackCollector::kInfo,
                                  &ProcNetstatCollector::kInfo,
                                  &ProcSchedstatCollector::kInfo,
                                  &ProcSockstatCollector::kInfo,
                                  &ProcSoftnetCollector::kInfo,
                                  &ProcSysCollector::kInfo,
                                  &ProcVmstatCollector::kInfo,
                                  &ProcBuddyinfoCollector::kInfo,
                                  &ProcInterruptsCollector::kInfo,
                                  &ProcZoneinfoCollector::kInfo,
                                  &SysNumaCollector::kInfo,
                                  &ProcArpCollector::kInfo,
                                  &ProcUdpCollector::kInfo};
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

    // PSI, InfiniBand, conntrack (module not loaded), schedstat (CONFIG_SCHEDSTATS) and NUMA
    // nodes are missing on many hosts.
    const bool may_be_absent =
        info == &ProcPressureCollector::kInfo || info == &SysInfinibandCollector::kInfo ||
        info == &ProcConntrackCollector::kInfo || info == &ProcSchedstatCollector::kInfo ||
        info == &SysNumaCollector::kInfo;
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
      if (!may_be_negative(s.desc->name)) {
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

}  // namespace
}  // namespace vigil
