// SPDX-License-Identifier: Apache-2.0
// proc_diskstats: per block device I/O counters from <proc>/diskstats, in base units (sectors are
// 512 bytes, times are converted from ms to s). Only whole disks are reported: a name that has a
// <sys>/block/<name> entry is a disk, a partition is not there (when <sys>/block itself is
// missing, every device is kept). Devices whose name matches `device_exclude` (an ECMAScript
// regex, default kDefaultDeviceExclude: loop, ram, zram, fd, sr and nbd devices) are skipped;
// dm-* and md* devices are kept by default (LVM and RAID volumes are what users mount).
// Handles the 14-field (Linux 2.6.25+), 18-field (4.18+, discards) and 20-field (5.5+,
// flushes) formats. Owned by the daemon's collection sequence; which devices it reports is
// chosen again only when the file's device names change. Missing file: NotFound (absent);
// malformed line: DataLoss; an invalid exclude regex: InvalidArgument on every Collect().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

struct ProcDiskstatsOptions {
  static constexpr std::string_view kDefaultDeviceExclude = "^(loop|ram|zram|fd|sr|nbd)[0-9]+$";
  std::string device_exclude = std::string(kDefaultDeviceExclude);
};

class ProcDiskstatsCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcDiskstatsCollector(HostPaths paths, ProcDiskstatsOptions options = {});
  Status Collect(MetricWriter& out) override;

  struct Device {
    std::string_view name;  // Points into the parsed text.
    int fields = 0;         // Statistic fields after the name: 11, 15 or 17.
    // Kernel order (Documentation/admin-guide/iostats.rst): reads, reads merged, sectors read,
    // ms reading, writes, writes merged, sectors written, ms writing, I/Os in progress, ms doing
    // I/O, weighted ms, discards, discards merged, sectors discarded, ms discarding, flushes,
    // ms flushing.
    std::array<uint64_t, 17> v{};
  };
  // Parses diskstats text. DataLoss on a line with fewer than 14 fields or a bad number.
  static StatusOr<std::vector<Device>> Parse(std::string_view text);

 private:
  HostPaths paths_;
  std::optional<std::regex> exclude_;
  Status options_status_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  // Sets reported_ (index-aligned with `devices`): whole disks not excluded. False when
  // <sys>/block could not be listed (every device not excluded is then reported).
  bool ChooseReported(const std::vector<Device>& devices);
  std::string reported_for_;  // The device names (one per line) reported_ was chosen for.
  std::vector<bool> reported_;
};

}  // namespace vigil
