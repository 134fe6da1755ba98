// SPDX-License-Identifier: Apache-2.0
// Runs every host collector on this machine's own /proc and /sys: each must succeed (or report
// its source absent, for PSI, InfiniBand and the hardware sources a VM lacks) and produce
// plausible values.
#include <memory>

#include <gtest/gtest.h>

#include "collectors/collector_options.h"
#include "collectors/host_test_util.h"
#include "collectors/proc_cpu_collector.h"
#include "collectors/proc_diskstats_collector.h"
#include "collectors/proc_loadavg_collector.h"
#include "collectors/proc_mdstat_collector.h"
#include "collectors/proc_meminfo_collector.h"
#include "collectors/proc_netdev_collector.h"
#include "collectors/proc_pressure_collector.h"
#include "collectors/statvfs_filesystem_collector.h"
#include "collectors/sys_cpufreq_collector.h"
#include "collectors/sys_edac_collector.h"
#include "collectors/sys_ethtool_collector.h"
#include "collectors/sys_hwmon_collector.h"
#include "collectors/sys_infiniband_collector.h"
#include "collectors/sys_netclass_collector.h"
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
      &ProcMdstatCollector::kInfo,        &SysCpufreqCollector::kInfo,
      &SysEdacCollector::kInfo,           &SysEthtoolCollector::kInfo,
      &SysHwmonCollector::kInfo,          &SysNetclassCollector::kInfo,
      &SysNvmeCollector::kInfo,           &SysThermalCollector::kInfo};
  // Sources a VM or container may lack; the network classes exist wherever /sys does.
  const CollectorInfo* may_be_absent_infos[] = {
      &ProcPressureCollector::kInfo, &SysInfinibandCollector::kInfo, &ProcMdstatCollector::kInfo,
      &SysCpufreqCollector::kInfo,   &SysEdacCollector::kInfo,       &SysEthtoolCollector::kInfo,
      &SysHwmonCollector::kInfo,     &SysNvmeCollector::kInfo,       &SysThermalCollector::kInfo};
  const CollectorOptions options;  // The real /proc and /sys.
  for (const CollectorInfo* info : infos) {
    SCOPED_TRACE(info->name);
    std::unique_ptr<Collector> collector = info->create(options);
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
    EXPECT_GT(r.batch.samples.size(), 0u);
    for (const Sample& s : r.batch.samples) {
      bool listed = false;
      for (const MetricDesc* desc : info->metrics) {
        listed = listed || desc == s.desc;
      }
      EXPECT_TRUE(listed) << s.desc->name << " is not in CollectorInfo::metrics";
      if (s.desc->unit != "celsius") {  // Sensors may read below freezing.
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
