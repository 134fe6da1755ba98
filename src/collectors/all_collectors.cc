// SPDX-License-Identifier: Apache-2.0
#include "collectors/all_collectors.h"

#include "collectors/bpf/bpf_cuda_collector.h"
#include "collectors/cgroup/cgroup_collector.h"
#include "collectors/gpu_collector.h"
#include "collectors/perf_pmu_collector.h"
#include "collectors/proc_cpu_collector.h"
#include "collectors/proc_diskstats_collector.h"
#include "collectors/proc_loadavg_collector.h"
#include "collectors/proc_mdstat_collector.h"
#include "collectors/proc_meminfo_collector.h"
#include "collectors/proc_netdev_collector.h"
#include "collectors/proc_pressure_collector.h"
#include "collectors/process/process_collector.h"
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

// One row per collector, sorted by name. Declarations come from each collector's header.
constexpr const CollectorInfo* kAllCollectors[] = {
    nullptr,  // Placeholder so the array is never empty; AllCollectors() skips it.
    &BpfCudaCollector::kInfo,
    &GpuCollector::kInfo,
    &PerfPmuCollector::kInfo,
    &ProcCpuCollector::kInfo,
    &ProcDiskstatsCollector::kInfo,
    &ProcLoadavgCollector::kInfo,
    &ProcMdstatCollector::kInfo,
    &ProcMeminfoCollector::kInfo,
    &ProcNetdevCollector::kInfo,
    &ProcPressureCollector::kInfo,
    &ProcessCollector::kInfo,
    &StatvfsFilesystemCollector::kInfo,
    &CgroupCollector::kInfo,
    &SysCpufreqCollector::kInfo,
    &SysEdacCollector::kInfo,
    &SysEthtoolCollector::kInfo,
    &SysHwmonCollector::kInfo,
    &SysInfinibandCollector::kInfo,
    &SysNetclassCollector::kInfo,
    &SysNvmeCollector::kInfo,
    &SysThermalCollector::kInfo,
};

}  // namespace

std::span<const CollectorInfo* const> AllCollectors() {
  return std::span<const CollectorInfo* const>(kAllCollectors).subspan(1);
}

}  // namespace vigil
