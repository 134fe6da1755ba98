// SPDX-License-Identifier: Apache-2.0
#include "collectors/all_collectors.h"

#include "collectors/bpf/bpf_cuda_collector.h"
#include "collectors/cgroup/cgroup_collector.h"
#include "collectors/clock_time_collector.h"
#include "collectors/daemon_self_collector.h"
#include "collectors/gpu_collector.h"
#include "collectors/host_os_collector.h"
#include "collectors/ipc_fabric_collector.h"
#include "collectors/perf_pmu_collector.h"
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
#include "collectors/process/process_collector.h"
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

// One row per collector, sorted by name. Declarations come from each collector's header.
constexpr const CollectorInfo* kAllCollectors[] = {
    nullptr,  // Placeholder so the array is never empty; AllCollectors() skips it.
    &BpfCudaCollector::kInfo,
    &ClockTimeCollector::kInfo,
    &DaemonSelfCollector::kInfo,
    &GpuCollector::kInfo,
    &HostOsCollector::kInfo,
    &IpcFabricCollector::kInfo,
    &PerfPmuCollector::kInfo,
    &ProcArpCollector::kInfo,
    &ProcBuddyinfoCollector::kInfo,
    &ProcConntrackCollector::kInfo,
    &ProcCpuCollector::kInfo,
    &ProcDiskstatsCollector::kInfo,
    &ProcInterruptsCollector::kInfo,
    &ProcLoadavgCollector::kInfo,
    &ProcMdstatCollector::kInfo,
    &ProcMeminfoCollector::kInfo,
    &ProcNetdevCollector::kInfo,
    &ProcNetstatCollector::kInfo,
    &ProcPressureCollector::kInfo,
    &ProcessCollector::kInfo,
    &ProcSchedstatCollector::kInfo,
    &ProcSockstatCollector::kInfo,
    &ProcSoftnetCollector::kInfo,
    &ProcSysCollector::kInfo,
    &ProcUdpCollector::kInfo,
    &ProcVmstatCollector::kInfo,
    &ProcZoneinfoCollector::kInfo,
    &StatvfsFilesystemCollector::kInfo,
    &CgroupCollector::kInfo,
    &SysCpufreqCollector::kInfo,
    &SysEdacCollector::kInfo,
    &SysEthtoolCollector::kInfo,
    &SysHwmonCollector::kInfo,
    &SysInfinibandCollector::kInfo,
    &SysNetclassCollector::kInfo,
    &SysNumaCollector::kInfo,
    &SysNvmeCollector::kInfo,
    &SysThermalCollector::kInfo,
};

}  // namespace

std::span<const CollectorInfo* const> AllCollectors() {
  return std::span<const CollectorInfo* const>(kAllCollectors).subspan(1);
}

}  // namespace vigil
