// SPDX-License-Identifier: Apache-2.0
// Where the host's cgroup hierarchies are: pure v2 (cgroup2 at /sys/fs/cgroup), v1 (one mount per
// controller or controller group) or hybrid (v1 controllers plus a usually controller-less
// cgroup2 at /sys/fs/cgroup/unified). Found from the mount table, with every mount point under
// /sys mapped below HostPaths::sys_root so fixture trees and containers work. Pure value type;
// DetectCgroupLayout() only reads files.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "collectors/collector.h"

namespace vigil {

struct CgroupLayout {
  enum class Kind { kNone, kV1, kV2, kHybrid };
  Kind kind = Kind::kNone;
  // Directory of the cgroup2 hierarchy's root on this machine (under sys_root); "" when none.
  std::string unified;
  // v1 controller ("cpu", "cpuacct", "memory", "blkio", ..., "name=systemd") -> directory of its
  // hierarchy's root. Controllers mounted together ("cpu,cpuacct") share one directory.
  std::map<std::string, std::string> v1;

  // Directory of `controller`'s v1 hierarchy, or "" when it is not mounted.
  std::string V1Root(std::string_view controller) const;
};

std::string_view CgroupKindName(CgroupLayout::Kind kind);  // "none", "v1", "v2", "hybrid"

// Maps a mount point as the mount table shows it to a directory on this machine: /sys/... goes
// below `sys_root`; other paths are kept. Undoes the table's octal escapes ("\040" = space).
std::string ResolveMountPoint(std::string_view mount_point, std::string_view sys_root);

// Parses a mount table (/proc/self/mounts format). Never fails: no cgroup mount gives kNone.
CgroupLayout ParseCgroupMounts(std::string_view mounts, std::string_view sys_root);

// Reads <proc>/self/mounts, else <proc>/1/mounts. NotFound when neither exists or no cgroup
// filesystem is mounted.
StatusOr<CgroupLayout> DetectCgroupLayout(const HostPaths& paths);

}  // namespace vigil
