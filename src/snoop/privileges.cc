// SPDX-License-Identifier: Apache-2.0
#include "snoop/privileges.h"

#include <cstdlib>
#include <string>

#include "base/file_util.h"
#include "snoop/snoop_session.h"

namespace vigil::snoop {
namespace {

constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

bool Has(uint64_t mask, int cap) { return (mask >> cap) & 1; }

}  // namespace

uint64_t EffectiveCapabilities(std::string_view text) {
  constexpr std::string_view kKey = "CapEff:";
  size_t at = text.find(kKey);
  if (at == std::string_view::npos) return 0;
  std::string value(text.substr(at + kKey.size(), 32));
  return std::strtoull(value.c_str(), nullptr, 16);
}

Status CheckCapabilities(uint64_t cap_eff) {
  if (Has(cap_eff, kCapSysAdmin) || (Has(cap_eff, kCapBpf) && Has(cap_eff, kCapPerfmon))) {
    return OkStatus();
  }
  return PermissionDeniedError(
      "vigil snoop needs root (or CAP_BPF and CAP_PERFMON) to load its eBPF uprobes");
}

Status CheckSnoopPrivileges() {
  StatusOr<std::string> status = ReadSmallFile("/proc/self/status", 64 << 10);
  if (!status.ok()) return status.status().WithContext("reading capabilities");
  return CheckCapabilities(EffectiveCapabilities(*status));
}

}  // namespace vigil::snoop
