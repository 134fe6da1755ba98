// SPDX-License-Identifier: Apache-2.0
// Reading one cgroup's CPU, throttling, memory and I/O figures from either cgroup version, in
// base units. Parsers are pure (tested on strings); ReadCgroupStats() reads files and never
// fails: a missing file is a feature the kernel lacks, any other read error is counted in
// `unreadable_files` and the value left unset. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/cgroup/cgroup_layout.h"
#include "collectors/kept_files.h"

namespace vigil {

struct CgroupStats {
  bool found = false;  // The cgroup's directory exists in at least one hierarchy read.
  std::optional<double> cpu_usage_seconds;
  std::optional<double> cpu_user_seconds;
  std::optional<double> cpu_system_seconds;
  std::optional<double> cpu_periods;
  std::optional<double> cpu_throttled_periods;
  std::optional<double> cpu_throttled_seconds;
  std::optional<double> memory_usage_bytes;
  std::optional<double> memory_peak_bytes;
  std::optional<double> memory_limit_bytes;  // Unset when unlimited.
  std::optional<double> io_read_bytes;
  std::optional<double> io_written_bytes;
  int unreadable_files = 0;
};

// "key value" lines (cpu.stat, cpuacct.stat, memory.stat). Lines that do not parse are skipped.
std::map<std::string, uint64_t> ParseFlatKeyed(std::string_view text);

struct IoBytes {
  uint64_t read = 0;
  uint64_t written = 0;
};
// v2 io.stat: "8:0 rbytes=1 wbytes=2 rios=3 ..." per device, summed.
IoBytes ParseIoStat(std::string_view text);
// v1 blkio.throttle.io_service_bytes: "8:0 Read 123" per device and op, summed; the per-device
// and final "Total" lines are ignored.
IoBytes ParseBlkioServiceBytes(std::string_view text);
// memory.max (v2, "max" = unlimited) or memory.limit_in_bytes (v1, a value near 2^63 means
// unlimited). nullopt when unlimited or unparsable.
std::optional<uint64_t> ParseMemoryLimit(std::string_view text);

// Reads the cgroup at `path` ("/system.slice/foo.service") from the layout's hierarchies: all
// from the unified tree on v2; from the v1 controllers on v1 and hybrid hosts, falling back to
// the unified tree for a controller v1 does not mount. `clock_ticks_per_second` converts
// cpuacct.stat (USER_HZ). With `files`, through its kept descriptors.
CgroupStats ReadCgroupStats(const CgroupLayout& layout, std::string_view path,
                            int64_t clock_ticks_per_second, KeptFiles* files = nullptr);

}  // namespace vigil
