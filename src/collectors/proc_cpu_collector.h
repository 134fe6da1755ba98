// SPDX-License-Identifier: Apache-2.0
// proc_cpu: CPU time by mode, per CPU and host-wide, from <proc>/stat, plus context switches,
// interrupts, forks, runnable/blocked tasks and boot time. The host-wide line is exported with
// cpu="all" in the same families as the per-CPU lines (filter cpu!="all" before summing).
// A utilisation ratio is computed from the previous reading, so the first Collect() emits none.
// Owned by the daemon's collection sequence; not thread-safe (keeps the previous reading).
// A missing <proc>/stat is NotFound (absent); a malformed one is DataLoss.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcCpuCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  // Modes in /proc/stat order (guest time is already counted in user and nice).
  static constexpr std::array<std::string_view, 8> kModes = {"user",   "nice", "system",  "idle",
                                                             "iowait", "irq",  "softirq", "steal"};

  // `user_hz` converts ticks to seconds; 0 means this host's sysconf(_SC_CLK_TCK).
  explicit ProcCpuCollector(HostPaths paths, double user_hz = 0);
  Status Collect(MetricWriter& out) override;

  struct CpuTicks {
    int cpu = -1;   // -1 for the host-wide "cpu" line.
    int modes = 0;  // How many of kModes the kernel reported (4 to 8).
    std::array<uint64_t, 8> ticks{};
  };
  struct Stat {
    std::vector<CpuTicks> cpus;  // The host-wide line first.
    std::optional<uint64_t> context_switches, interrupts, forks, procs_running, procs_blocked,
        boot_time;
  };
  // Parses /proc/stat text. DataLoss on a truncated cpu line or a bad number.
  static StatusOr<Stat> Parse(std::string_view text);
  // Busy share of the ticks between two readings of one CPU; nullopt when no time passed or a
  // counter went backwards (CPU hotplug).
  static std::optional<double> Utilization(const CpuTicks& before, const CpuTicks& after);

 private:
  HostPaths paths_;
  double user_hz_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  std::vector<CpuTicks> previous_;
};

}  // namespace vigil
