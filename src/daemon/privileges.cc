// SPDX-License-Identifier: Apache-2.0
#include "daemon/privileges.h"

#include <linux/capability.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/strings.h"
#include "rpc/net_util.h"

namespace vigil::daemon {
namespace {

// CAP_BPF and CAP_PERFMON (Linux 5.8) are in Debian 12's kernel headers; older headers lack them.
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

constexpr CapabilityNeed kTable[] = {
    // eBPF uprobes on libcudart/libcuda (vigil snoop) and CPU stack sampling (vigil profile).
    {"bpf_cuda", CAP_BPF, "load eBPF programs and maps"},
    {"bpf_cuda", CAP_PERFMON, "attach uprobes and read perf ring buffers"},
    {"bpf_cuda", CAP_SYS_PTRACE, "read /proc/PID/maps and follow /proc/PID/root of CUDA processes"},
    {"bpf_cuda", CAP_DAC_READ_SEARCH, "read CUDA libraries inside containers (/proc/PID/root)"},
    // Every GPU-holding process is attributed to its job, partly from its environment.
    {"continuous_profile", CAP_PERFMON, "sample the stacks of processes holding GPUs"},
    {"continuous_profile", CAP_SYS_PTRACE, "read their maps and Python frames (process_vm_readv)"},
    {"gpu_devices", CAP_SYS_PTRACE, "read /proc/PID/environ of GPU processes for job attribution"},
    {"perf_pmu", CAP_PERFMON, "open CPU PMU events for every CPU and process"},
    {"privileged_port", CAP_NET_BIND_SERVICE, "listen on an RPC or HTTP port below 1024"},
    {"proc_process", CAP_DAC_READ_SEARCH, "read /proc/PID files of other users' processes"},
    {"proc_process", CAP_SYS_PTRACE, "read /proc/PID/fd and environ of other users' processes"},
    {"profile", CAP_BPF, "load eBPF stack-sampling programs"},
    {"profile", CAP_PERFMON, "sample stacks of other users' processes"},
    {"statvfs_filesystem", CAP_DAC_READ_SEARCH, "statfs mount points under private directories"},
    {"tracing", CAP_CHOWN, "hand each trace directory to the traced process's user (fchown)"},
    {"tracing", CAP_DAC_READ_SEARCH, "stat and read trace files in those 0700 directories"},
    {"tracing", CAP_SYS_PTRACE, "read /proc/PID/environ of registered processes for their job"},
};

constexpr std::pair<int, std::string_view> kNames[] = {
    {CAP_CHOWN, "cap_chown"},
    {CAP_DAC_OVERRIDE, "cap_dac_override"},
    {CAP_DAC_READ_SEARCH, "cap_dac_read_search"},
    {CAP_FOWNER, "cap_fowner"},
    {CAP_FSETID, "cap_fsetid"},
    {CAP_KILL, "cap_kill"},
    {CAP_SETGID, "cap_setgid"},
    {CAP_SETUID, "cap_setuid"},
    {CAP_SETPCAP, "cap_setpcap"},
    {CAP_NET_BIND_SERVICE, "cap_net_bind_service"},
    {CAP_NET_ADMIN, "cap_net_admin"},
    {CAP_NET_RAW, "cap_net_raw"},
    {CAP_IPC_LOCK, "cap_ipc_lock"},
    {CAP_SYS_MODULE, "cap_sys_module"},
    {CAP_SYS_PTRACE, "cap_sys_ptrace"},
    {CAP_SYS_ADMIN, "cap_sys_admin"},
    {CAP_SYS_RESOURCE, "cap_sys_resource"},
    {CAP_PERFMON, "cap_perfmon"},
    {CAP_BPF, "cap_bpf"},
};

bool PrivilegedPort(const std::string& listen) {
  if (listen.empty()) {
    return false;
  }
  auto hp = ParseHostPort(listen);
  return hp.ok() && hp->port > 0 && hp->port < 1024;
}

}  // namespace

std::span<const CapabilityNeed> CapabilityTable() { return kTable; }

std::vector<std::string> EnabledFeatures(const DaemonConfig& config,
                                         std::span<const std::string> enabled_collectors) {
  std::vector<std::string> features(enabled_collectors.begin(), enabled_collectors.end());
  if (!config.once) {
    features.emplace_back("tracing");
  }
  if (!config.once && config.profile.continuous) {
    features.emplace_back("continuous_profile");
  }
  if (PrivilegedPort(config.rpc_listen) || PrivilegedPort(config.http_listen)) {
    features.emplace_back("privileged_port");
  }
  std::sort(features.begin(), features.end());
  return features;
}

PrivilegePlan PlanPrivileges(std::span<const std::string> features) {
  PrivilegePlan plan;
  for (const CapabilityNeed& need : kTable) {
    if (std::find(features.begin(), features.end(), need.feature) == features.end()) {
      continue;
    }
    plan.keep |= CapabilityBit(need.capability);
    plan.reasons.push_back(
        fmt::format("{} for {}: {}", CapabilityName(need.capability), need.feature, need.why));
  }
  return plan;
}

std::string CapabilityName(int cap) {
  for (const auto& [number, name] : kNames) {
    if (number == cap) {
      return std::string(name);
    }
  }
  return fmt::format("cap_{}", cap);
}

std::string FormatCapabilities(CapabilitySet caps) {
  std::vector<std::string> names;
  for (int cap = 0; cap < 64; ++cap) {
    if ((caps & CapabilityBit(cap)) != 0) {
      names.push_back(CapabilityName(cap));
    }
  }
  return names.empty() ? "none" : Join(names, ",");
}

}  // namespace vigil::daemon
