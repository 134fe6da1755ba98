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
  // Mount directory -> the cgroup it shows, when not the hierarchy's root (from mountinfo's root
  // field). A container without its own cgroup namespace and without the host's cgroup tree
  // mounted sees its own cgroup, say /docker/ID, at /sys/fs/cgroup, while /proc/PID/cgroup
  // names it /docker/ID: paths are translated through this, and cgroups outside it are not visible.
  std::map<std::string, std::string> mount_roots;

  // Directory of `controller`'s v1 hierarchy, or "" when it is not mounted.
  std::string V1Root(std::string_view controller) const;
  // The cgroup the mount at `dir` shows ("/" = the whole hierarchy).
  std::string_view MountRoot(const std::string& dir) const;
  // Directory of hierarchy path `path` below the mount at `dir`; "" when `dir` is "" or the
  // mount does not show that cgroup.
  std::string Dir(const std::string& dir, std::string_view path) const;
  // The hierarchy path of `relative` (a path below the mount at `dir`).
  std::string HierarchyPath(const std::string& dir, std::string_view relative) const;
};

std::string_view CgroupKindName(CgroupLayout::Kind kind);  // "none", "v1", "v2", "hybrid"

// Maps a mount point as the mount table shows it to a directory on this machine: /sys/... goes
// below `sys_root`; other paths are kept. Undoes the table's octal escapes ("\040" = space).
std::string ResolveMountPoint(std::string_view mount_point, std::string_view sys_root);

// Parses a mount table (/proc/self/mounts format). Never fails: no cgroup mount gives kNone.
CgroupLayout ParseCgroupMounts(std::string_view mounts, std::string_view sys_root);

// Fills layout->mount_roots from a mountinfo table (/proc/self/mountinfo format).
void ParseCgroupMountRoots(std::string_view mountinfo, std::string_view sys_root,
                           CgroupLayout* layout);

// Reads <proc>/self/mounts, else <proc>/1/mounts, and the mount roots from the matching
// mountinfo when there is one. NotFound when neither exists or no cgroup filesystem is mounted.
StatusOr<CgroupLayout> DetectCgroupLayout(const HostPaths& paths);

}  // namespace vigil
