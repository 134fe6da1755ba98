// SPDX-License-Identifier: Apache-2.0
#include "collectors/statvfs_filesystem_collector.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <map>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/deadline_statfs.h"
#include "collectors/kept_files.h"

namespace vigil {
namespace {

constexpr MetricDesc kSize{"vigil_host_filesystem_size_bytes", "Filesystem size.",
                           MetricKind::kGauge, "bytes"};
constexpr MetricDesc kFree{"vigil_host_filesystem_free_bytes",
                           "Free space, including blocks reserved for root.", MetricKind::kGauge,
                           "bytes"};
constexpr MetricDesc kAvail{"vigil_host_filesystem_avail_bytes",
                            "Free space available to unprivileged users.", MetricKind::kGauge,
                            "bytes"};
constexpr MetricDesc kUsed{"vigil_host_filesystem_used_bytes", "Size minus free space.",
                           MetricKind::kGauge, "bytes"};
constexpr MetricDesc kInodes{"vigil_host_filesystem_inodes", "Inodes (file nodes) in total.",
                             MetricKind::kGauge, ""};
constexpr MetricDesc kInodesFree{"vigil_host_filesystem_inodes_free", "Inodes free.",
                                 MetricKind::kGauge, ""};
constexpr MetricDesc kReadOnly{"vigil_host_filesystem_readonly",
                               "1 when the filesystem is mounted read-only.", MetricKind::kGauge,
                               ""};
constexpr MetricDesc kDeviceError{"vigil_host_filesystem_device_error",
                                  "1 when statvfs on the mount point failed.", MetricKind::kGauge,
                                  ""};
constexpr const MetricDesc* kMetrics[] = {&kSize,   &kFree,       &kAvail,    &kUsed,
                                          &kInodes, &kInodesFree, &kReadOnly, &kDeviceError};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<StatvfsFilesystemCollector>(
      context.paths, context.OptionsFor<StatvfsFilesystemOptions>());
}

// The kernel escapes space, tab, newline and backslash in mount paths as \ooo (fs/proc_namespace.c
// mangle()).
std::string DecodeOctal(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 3 < in.size() && in[i + 1] >= '0' && in[i + 1] <= '3' &&
        in[i + 2] >= '0' && in[i + 2] <= '7' && in[i + 3] >= '0' && in[i + 3] <= '7') {
      out.push_back(
          static_cast<char>((in[i + 1] - '0') * 64 + (in[i + 2] - '0') * 8 + (in[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

bool HasOption(std::string_view options, std::string_view name) {
  for (std::string_view o : Split(options, ',')) {
    if (o == name) {
      return true;
    }
  }
  return false;
}

Status CompileRegex(std::string_view what, const std::string& pattern,
                    std::optional<std::regex>* out) {
  if (pattern.empty()) {
    return OkStatus();
  }
  try {  // std::regex reports a bad pattern only by throwing.
    out->emplace(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidArgumentError("statvfs_filesystem: bad " + std::string(what) + " regex '" +
                                pattern + "': " + e.what());
  }
  return OkStatus();
}

}  // namespace

const CollectorInfo StatvfsFilesystemCollector::kInfo = {
    .name = "statvfs_filesystem",
    .help = "Size, free space and inodes of real mounts (mount table + statvfs).",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

StatvfsFilesystemCollector::StatvfsFilesystemCollector(HostPaths paths,
                                                       StatvfsFilesystemOptions options)
    : paths_(std::move(paths)),
      statfs_(DeadlineStatfs(options.statfs ? std::move(options.statfs) : StatFsFunction(&StatVfs),
                             options.statfs_timeout)) {
  options_status_ = CompileRegex("fstype_exclude", options.fstype_exclude, &fstype_exclude_);
  if (options_status_.ok()) {
    options_status_ =
        CompileRegex("mount_point_exclude", options.mount_point_exclude, &mount_point_exclude_);
  }
}

StatusOr<std::vector<StatvfsFilesystemCollector::Mount>> StatvfsFilesystemCollector::Parse(
    std::string_view text) {
  std::vector<Mount> out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view device;
    std::string_view mount_point;
    std::string_view options;
    Mount m;
    if (!NextField(&line, &device)) {
      continue;
    }
    if (!NextField(&line, &mount_point) || !NextField(&line, &m.fstype) ||
        !NextField(&line, &options)) {
      return DataLossError("mounts: truncated line for " + SanitizeForLog(device, 60));
    }
    m.device = device;
    m.mount_point = DecodeOctal(mount_point);
    m.read_only = HasOption(options, "ro");
    out.push_back(std::move(m));
  }
  return out;
}

StatusOr<FsStats> StatvfsFilesystemCollector::StatVfs(const std::string& mount_point) {
  struct statvfs st {};
  if (statvfs(mount_point.c_str(), &st) != 0) {
    return ErrnoStatus(errno, "statvfs " + mount_point);
  }
  const uint64_t frsize = st.f_frsize != 0 ? st.f_frsize : st.f_bsize;
  return FsStats{.size_bytes = st.f_blocks * frsize,
                 .free_bytes = st.f_bfree * frsize,
                 .avail_bytes = st.f_bavail * frsize,
                 .inodes = st.f_files,
                 .inodes_free = st.f_ffree};
}

Status StatvfsFilesystemCollector::RefreshTargets() {
  if (mounts_fd_.valid()) {
    if (mounts_pollable_) {
      pollfd p{.fd = mounts_fd_.get(), .events = POLLPRI, .revents = 0};
      const int ready = poll(&p, 1, 0);
      if (ready == 0) {
        return OkStatus();  // No mount or unmount since the last read.
      }
    }
    if (ReadTargets(mounts_fd_.get(), "mounts").ok()) {
      return OkStatus();
    }
    mounts_fd_.Reset();  // Open it again by name below.
  }
  Status error;
  for (const std::string& path : {paths_.Proc("1/mounts"), paths_.Proc("mounts")}) {
    ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
      error = ErrnoStatus(errno, "open " + path);
      continue;
    }
    const bool pollable = OnProcfs(fd.get());
    if (pollable) {
      pollfd p{.fd = fd.get(), .events = POLLPRI, .revents = 0};
      poll(&p, 1, 0);  // Takes the table's current state as seen.
    }
    error = ReadTargets(fd.get(), path);
    if (error.ok()) {
      mounts_fd_ = std::move(fd);
      mounts_pollable_ = pollable;
      return OkStatus();
    }
  }
  return error;
}

Status StatvfsFilesystemCollector::ReadTargets(int fd, const std::string& path) {
  VIGIL_RETURN_IF_ERROR(PreadFileInto(fd, path, &buf_));
  StatusOr<std::vector<Mount>> parsed = Parse(buf_);
  if (!parsed.ok()) {
    return parsed.status().WithContext(path);
  }
  std::map<std::string_view, const Mount*> by_mount_point;  // Later mounts hide earlier ones.
  for (const Mount& m : *parsed) {
    by_mount_point[m.mount_point] = &m;
  }
  targets_.clear();
  for (const auto& [mount_point, m] : by_mount_point) {
    if (fstype_exclude_ &&
        std::regex_search(m->fstype.begin(), m->fstype.end(), *fstype_exclude_)) {
      continue;
    }
    if (mount_point_exclude_ &&
        std::regex_search(mount_point.begin(), mount_point.end(), *mount_point_exclude_)) {
      continue;
    }
    targets_.push_back(Target{.mount_point = m->mount_point,
                              .labels = {{"device", std::string(m->device)},
                                         {"fstype", std::string(m->fstype)},
                                         {"mountpoint", m->mount_point}},
                              .read_only = m->read_only});
  }
  return OkStatus();
}

Status StatvfsFilesystemCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(options_status_);
  VIGIL_RETURN_IF_ERROR(RefreshTargets());
  for (const Target& t : targets_) {
    const Labels& labels = t.labels;
    StatusOr<FsStats> st = statfs_(t.mount_point);
    if (!st.ok()) {
      out.Add(kDeviceError, 1, labels);
      continue;
    }
    out.Add(kDeviceError, 0, labels);
    out.Add(kReadOnly, t.read_only ? 1 : 0, labels);
    out.Add(kSize, static_cast<double>(st->size_bytes), labels);
    out.Add(kFree, static_cast<double>(st->free_bytes), labels);
    out.Add(kAvail, static_cast<double>(st->avail_bytes), labels);
    const uint64_t used = st->size_bytes >= st->free_bytes ? st->size_bytes - st->free_bytes : 0;
    out.Add(kUsed, static_cast<double>(used), labels);
    out.Add(kInodes, static_cast<double>(st->inodes), labels);
    out.Add(kInodesFree, static_cast<double>(st->inodes_free), labels);
  }
  return OkStatus();
}

}  // namespace vigil
