// SPDX-License-Identifier: Apache-2.0
// Fuzzes every parser of the host collectors' /proc and /sys text (collectors/proc_*.h,
// statvfs_filesystem_collector.h, sys_infiniband_collector.h, sys_numa_collector.h,
// host_os_collector.h, proc_parse.h, and the hwmon chip-name cleaner). Each input is fed to all
// of them, so a real file of any kind (the corpus holds this project's fixture files and files of
// real hosts) seeds every parser at once. Invariants beyond "no crash": the views a parser
// returns point into the text it was given.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/host_os_collector.h"
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
#include "collectors/proc_parse.h"
#include "collectors/proc_pressure_collector.h"
#include "collectors/proc_schedstat_collector.h"
#include "collectors/proc_sockstat_collector.h"
#include "collectors/proc_softnet_collector.h"
#include "collectors/proc_udp_collector.h"
#include "collectors/proc_vmstat_collector.h"
#include "collectors/proc_zoneinfo_collector.h"
#include "collectors/statvfs_filesystem_collector.h"
#include "collectors/sys_hwmon_collector.h"
#include "collectors/sys_infiniband_collector.h"
#include "collectors/sys_numa_collector.h"
#include "fuzz/fuzz_input.h"

namespace {

bool Inside(std::string_view text, std::string_view part) {
  return part.empty() ||
         (part.data() >= text.data() && part.data() + part.size() <= text.data() + text.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy the size of the input, so ASan sees a read one past the end.
  const std::string copy(reinterpret_cast<const char*>(data), size);
  const std::string_view text = copy;

  [[maybe_unused]] auto cpu = vigil::ProcCpuCollector::Parse(text);
  if (auto disks = vigil::ProcDiskstatsCollector::Parse(text); disks.ok()) {
    for (const auto& d : *disks) {
      VIGIL_FUZZ_CHECK(Inside(text, d.name));
    }
  }
  [[maybe_unused]] auto load = vigil::ProcLoadavgCollector::Parse(text);
  [[maybe_unused]] auto mem = vigil::ProcMeminfoCollector::Parse(text);
  [[maybe_unused]] auto node = vigil::ProcMeminfoCollector::ParseNode(text);
  if (auto ifs = vigil::ProcNetdevCollector::ParseNetDev(text); ifs.ok()) {
    for (const auto& i : *ifs) {
      VIGIL_FUZZ_CHECK(Inside(text, i.name));
    }
  }
  for (std::string_view section : {"Tcp", "TcpExt", "Ip", "Udp", ""}) {
    if (auto pairs = vigil::ProcNetdevCollector::ParseSnmpSection(text, section); pairs.ok()) {
      for (const auto& [name, value] : *pairs) {
        VIGIL_FUZZ_CHECK(Inside(text, name));
      }
    }
  }
  [[maybe_unused]] auto psi = vigil::ProcPressureCollector::Parse(text);
  if (auto mounts = vigil::StatvfsFilesystemCollector::Parse(text); mounts.ok()) {
    for (const auto& m : *mounts) {
      VIGIL_FUZZ_CHECK(Inside(text, m.fstype) && Inside(text, m.device));
    }
  }
  [[maybe_unused]] auto state = vigil::SysInfinibandCollector::ParseState(text);
  [[maybe_unused]] auto rate = vigil::SysInfinibandCollector::ParseRate(text);
  if (auto arrays = vigil::ProcMdstatCollector::Parse(text); arrays.ok()) {
    for (const auto& a : *arrays) {
      VIGIL_FUZZ_CHECK(Inside(text, a.name));
      VIGIL_FUZZ_CHECK(a.disks_failed + a.disks_spare <= a.disks_total);
      VIGIL_FUZZ_CHECK(a.sync_ratio >= 0);
    }
  }
  const std::string clean = vigil::SysHwmonCollector::CleanName(text);
  VIGIL_FUZZ_CHECK(clean.size() <= text.size());
  [[maybe_unused]] auto counter = vigil::ParseCounterField(text, "field");
  [[maybe_unused]] auto decimal = vigil::ParseDecimalField(text, "field");
  [[maybe_unused]] auto vmstat = vigil::ProcVmstatCollector::Parse(text);
  [[maybe_unused]] auto conntrack = vigil::ProcConntrackCollector::ParseStat(text);
  [[maybe_unused]] auto udp = vigil::ProcUdpCollector::Parse(text);
  std::vector<vigil::ProcSoftnetCollector::Cpu> softnet;
  [[maybe_unused]] auto softnet_status = vigil::ProcSoftnetCollector::Parse(text, &softnet);
  std::vector<vigil::ProcSchedstatCollector::Cpu> sched;
  if (vigil::ProcSchedstatCollector::Parse(text, &sched).ok()) {
    for (const auto& c : sched) {
      VIGIL_FUZZ_CHECK(Inside(text, c.cpu));
    }
  }
  std::vector<std::pair<std::string_view, uint64_t>> arp;
  if (vigil::ProcArpCollector::Parse(text, &arp).ok()) {
    for (const auto& [device, count] : arp) {
      VIGIL_FUZZ_CHECK(Inside(text, device) && count > 0);
    }
  }
  [[maybe_unused]] auto os = vigil::HostOsCollector::ParseOsRelease(text);
  {
    vigil::MetricBatch batch;
    vigil::MetricWriter writer(&batch);
    [[maybe_unused]] auto s1 = vigil::ProcSockstatCollector::Parse(text, 4096, writer);
    [[maybe_unused]] auto s2 = vigil::ProcInterruptsCollector::Parse(text, writer);
    [[maybe_unused]] auto s3 = vigil::ProcBuddyinfoCollector::Parse(text, writer);
    [[maybe_unused]] auto s4 = vigil::ProcZoneinfoCollector::Parse(text, 4096, writer);
    [[maybe_unused]] auto s5 = vigil::SysNumaCollector::ParseMeminfo(text, "0", writer);
    [[maybe_unused]] auto s6 = vigil::SysNumaCollector::ParseNumastat(text, "0", writer);
  }
  for (std::string_view key : {"avg10", "rbytes", ""}) {
    std::string_view v = vigil::ValueAfterKey(text, key);
    VIGIL_FUZZ_CHECK(v.data() == nullptr || Inside(text, v));
  }
  return 0;
}
