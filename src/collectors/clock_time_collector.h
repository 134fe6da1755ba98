// SPDX-License-Identifier: Apache-2.0
// clock_time: the host clock: wall time, the local time zone's UTC offset, the clock sources the
// kernel offers and uses (<sys>/devices/system/clocksource/*), and the kernel's NTP discipline
// state from adjtimex(2) read-only (offset, frequency adjustment, error bounds, status, PPS
// counters, whether the clock is synchronised). Owned by the daemon's collection sequence; keeps
// only the list of clock source devices, listed again every RescanSchedule ticks or when one
// vanished. adjtimex is reached through `ClockTimeOptions::adjtimex` so tests can give a kernel
// state. A failing adjtimex (a seccomp filter) keeps the other samples and returns its error;
// no clocksource directory (a container without /sys) leaves those two families out.
#pragma once

#include <sys/timex.h>

#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"
#include "collectors/sysfs_reader.h"

namespace vigil {

struct ClockTimeOptions {
  // Reads the kernel clock state with modes 0 (no change); returns the clock state (TIME_OK,
  // TIME_ERROR, ...) or -1 with errno set, as adjtimex(2) does.
  int (*adjtimex)(struct timex* buf) = &::adjtimex;
};

class ClockTimeCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ClockTimeCollector(HostPaths paths, ClockTimeOptions options = {});
  Status Collect(MetricWriter& out) override;

  // Writes the timex families for one adjtimex result (`state` is its return value).
  static void AddTimex(const struct timex& tx, int state, MetricWriter& out);

 private:
  void CollectClocksources(MetricWriter& out);

  HostPaths paths_;
  ClockTimeOptions options_;
  std::string buf_;
  KeptFiles files_;                   // Its files, open between ticks.
  std::vector<std::string> devices_;  // clocksource* under <sys>/devices/system/clocksource.
  RescanSchedule devices_schedule_;
};

}  // namespace vigil
