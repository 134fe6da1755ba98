// SPDX-License-Identifier: Apache-2.0
// proc_pressure: Linux pressure-stall information (PSI, Linux 4.20+) from <proc>/pressure/{cpu,
// memory,io}: the share of wall time over the last 10 s and the cumulative time in which some
// (at least one) or all non-idle tasks were stalled on the resource. Kernels without CONFIG_PSI
// (or booted with psi=0) have no <proc>/pressure directory: Collect() then returns NotFound
// ("absent kernel support") and the daemon reports the collector absent. The cpu file has no
// "full" line before Linux 5.13; its stalled samples are then simply not emitted.
// Owned by the daemon's collection sequence; keeps only a reused read buffer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcPressureCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcPressureCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Line {
    double avg10_ratio = 0;    // avg10 / 100.
    double total_seconds = 0;  // total= is in microseconds.
  };
  struct Pressure {
    Line some;                 // At least one task stalled.
    std::optional<Line> full;  // All non-idle tasks stalled; no cpu line before Linux 5.13.
  };
  // Parses one pressure file. DataLoss when the "some" line is missing or a field is malformed.
  static StatusOr<Pressure> Parse(std::string_view text);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
