// SPDX-License-Identifier: Apache-2.0
// What vigild may do as root, decided in one table: each feature (a collector, tracing, a
// privileged port) names the Linux capabilities it needs and why, and PlanPrivileges() keeps the
// union over the features a config enables; every other capability is dropped at start
// (privilege_drop.h). A feature missing from the table needs none. docs/deployment.md lists the
// same table for operators (systemd CapabilityBoundingSet=, a DaemonSet's capabilities.add).
// Pure functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config.h"

namespace vigil::daemon {

struct CapabilityNeed {
  std::string_view feature;  // A collector name, or "tracing", "privileged_port".
  int capability = 0;        // CAP_* from <linux/capability.h>.
  std::string_view why;
};

// Every row, sorted by feature.
std::span<const CapabilityNeed> CapabilityTable();

// Capabilities as a bit set (bit N = capability N), as in /proc/PID/status CapEff.
using CapabilitySet = uint64_t;
inline constexpr CapabilitySet CapabilityBit(int cap) { return CapabilitySet{1} << cap; }

struct PrivilegePlan {
  CapabilitySet keep = 0;
  std::vector<std::string> reasons;  // "cap_chown for tracing: ...", one per kept row.
};

// The features `config` turns on: the enabled collectors (`enabled_collectors`), "tracing"
// (unless --once) and "privileged_port" (an RPC or HTTP port below 1024).
std::vector<std::string> EnabledFeatures(const DaemonConfig& config,
                                         std::span<const std::string> enabled_collectors);
PrivilegePlan PlanPrivileges(std::span<const std::string> features);

// "cap_chown" for CAP_CHOWN; "cap_N" for a number this build has no name for.
std::string CapabilityName(int cap);
// "cap_chown,cap_dac_read_search", or "none".
std::string FormatCapabilities(CapabilitySet caps);

}  // namespace vigil::daemon
