// SPDX-License-Identifier: Apache-2.0
// Whether this process may load eBPF uprobes: CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN, which
// root has) in the effective set, read from /proc/self/status so no libcap is needed.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace vigil::snoop {

// The CapEff mask from status text ("CapEff:\t000001ffffffffff"); 0 when absent.
uint64_t EffectiveCapabilities(std::string_view proc_status_text);

// OK when `cap_eff` allows loading BPF programs and attaching uprobes.
Status CheckCapabilities(uint64_t cap_eff);

}  // namespace vigil::snoop
