// SPDX-License-Identifier: Apache-2.0
// The collector interface. A collector reads one source (a /proc file family, cgroups, a GPU
// library) and writes samples; it knows nothing of sinks, RPC or storage. Each collector runs on
// one sequence owned by the daemon, so it may keep previous readings in plain members.
// A source that does not exist on this host makes Collect() return NotFound or PermissionDenied
// (see IsAbsent): the daemon reports the collector as absent, not failed, and keeps running.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"
#include "metrics/metric.h"

namespace vigil {

// Where the host's pseudo-filesystems are. Tests and containers point these at other trees.
struct HostPaths {
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  // Mount table used to find filesystems and cgroup hierarchies (read from proc_root by default).
  std::string Proc(std::string_view rel) const { return JoinPath(proc_root, rel); }
  std::string Sys(std::string_view rel) const { return JoinPath(sys_root, rel); }
};

class Collector {
 public:
  virtual ~Collector() = default;
  // Appends this tick's samples. Partial output plus a non-OK status is allowed: samples already
  // written are kept, and the status says what was missing.
  virtual Status Collect(MetricWriter& out) = 0;
};

class CollectorContext;  // collector_context.h: paths, shared services, per-collector options.

struct CollectorInfo {
  std::string_view name;  // <source>_<thing>, e.g. "proc_cpu"; the `collector` label.
  std::string_view help;  // One line for --help and docs.
  bool enabled_by_default = true;
  std::span<const MetricDesc* const> metrics;  // Every family it may emit.
  std::unique_ptr<Collector> (*create)(const CollectorContext& context) = nullptr;
};

}  // namespace vigil
