// SPDX-License-Identifier: Apache-2.0
// proc_schedstat: per-CPU scheduler time from <proc>/schedstat: seconds tasks ran on the CPU,
// seconds runnable tasks waited for it, and timeslices run. Stateless; owned by the daemon's
// collection sequence. Kernels built without CONFIG_SCHEDSTATS have no file: NotFound
// (absent, saying so); a cpu line with fewer than 9 fields or a bad number is DataLoss.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcSchedstatCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcSchedstatCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Cpu {
    std::string_view cpu;  // "0", "1", ...; points into the parsed text.
    uint64_t running_ns = 0;
    uint64_t waiting_ns = 0;
    uint64_t timeslices = 0;
  };
  // Parses schedstat text (versions 15 to 17 share the cpu line) into `*out` (cleared first).
  static Status Parse(std::string_view text, std::vector<Cpu>* out);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  std::vector<Cpu> cpus_;
};

}  // namespace vigil
