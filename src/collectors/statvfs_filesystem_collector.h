// SPDX-License-Identifier: Apache-2.0
// statvfs_filesystem: size, free, available and used bytes and inode counts of every real mount,
// from the mount table (<proc>/1/mounts, which shows the host's mounts even when the daemon runs
// in its own mount namespace; <proc>/mounts when that is unreadable) and statvfs(3) on each mount
// point. Pseudo filesystems are skipped by fstype (kDefaultFsTypeExclude: proc, sysfs, cgroup*,
// devpts, overlay, squashfs, ...) and by mount point (kDefaultMountPointExclude: /proc, /sys,
// container runtime layers). tmpfs is kept: /dev/shm size matters to NCCL and data loaders.
// overlay is skipped: container root layers repeat the numbers of their backing filesystem.
// A mount point listed twice is reported once (the last mount hides the earlier ones).
// statvfs is injectable (options.statfs) so tests do not depend on this machine's disks; with a
// fixture proc root the real statvfs runs on the listed paths of this machine. A mount whose
// statvfs fails gets vigil_host_filesystem_device_error 1 and no size samples; the collector
// still succeeds. No mount table at all: NotFound (absent). Owned by the collection sequence.
// statvfs can block on a dead network mount, so every call runs with a deadline
// (deadline_statfs.h, options.statfs_timeout): such a mount reports device_error 1 and the others
// keep their numbers. The mount table is read again only when it changed: the kernel marks an open
// mounts file with POLLPRI after a mount or unmount (proc(5)), so a tick without one polls instead
// of reading and matching every line (a fixture tree, not procfs, is read every tick).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "collectors/collector.h"

namespace vigil {

struct FsStats {
  uint64_t size_bytes = 0;
  uint64_t free_bytes = 0;   // Free for root.
  uint64_t avail_bytes = 0;  // Free for unprivileged users.
  uint64_t inodes = 0;
  uint64_t inodes_free = 0;
};
using StatFsFunction = std::function<StatusOr<FsStats>(const std::string& mount_point)>;

struct StatvfsFilesystemOptions {
  static constexpr std::string_view kDefaultFsTypeExclude =
      "^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|efivarfs|fusectl|"
      "hugetlbfs|mqueue|nsfs|overlay|proc|pstore|ramfs|rpc_pipefs|securityfs|selinuxfs|squashfs|"
      "sysfs|tracefs)$";
  static constexpr std::string_view kDefaultMountPointExclude =
      "^/(proc|sys|run/credentials/.+|var/lib/docker/.+|var/lib/containers/storage/.+|"
      "var/lib/kubelet/.+|snap/.+)($|/)";
  std::string fstype_exclude = std::string(kDefaultFsTypeExclude);
  std::string mount_point_exclude = std::string(kDefaultMountPointExclude);
  StatFsFunction statfs = nullptr;                 // Null: statvfs(3).
  std::chrono::milliseconds statfs_timeout{2000};  // Per mount point and tick.
};

class StatvfsFilesystemCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit StatvfsFilesystemCollector(HostPaths paths, StatvfsFilesystemOptions options = {});
  Status Collect(MetricWriter& out) override;

  struct Mount {
    std::string_view device;  // Points into the parsed text.
    std::string mount_point;  // Octal escapes (\040 for space) decoded.
    std::string_view fstype;
    bool read_only = false;
  };
  // Parses a mounts file (fstab format). DataLoss on a line with fewer than four fields.
  static StatusOr<std::vector<Mount>> Parse(std::string_view text);
  // statvfs(3) on `mount_point`, in bytes and inodes.
  static StatusOr<FsStats> StatVfs(const std::string& mount_point);

 private:
  HostPaths paths_;
  StatFsFunction statfs_;
  std::optional<std::regex> fstype_exclude_;
  std::optional<std::regex> mount_point_exclude_;
  // A mount to statvfs each tick, as the last read of the mount table left it.
  struct Target {
    std::string mount_point;
    Labels labels;
    bool read_only = false;
  };
  // Reads the mount table into targets_ when it changed since the last read (or never was).
  Status RefreshTargets();
  Status ReadTargets(int fd, const std::string& path);

  Status options_status_;
  std::string buf_;
  ScopedFd mounts_fd_;
  bool mounts_pollable_ = false;  // procfs: POLLPRI says when it changed.
  std::vector<Target> targets_;
};

}  // namespace vigil
