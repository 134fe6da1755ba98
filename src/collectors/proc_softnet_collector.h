// SPDX-License-Identifier: Apache-2.0
// proc_softnet: per-CPU packet processing from <proc>/net/softnet_stat: packets processed and
// dropped (backlog full), times the receive softirq ran out of budget, RPS wake-ups, flow-limit
// drops and the backlog length. Stateless; owned by the daemon's collection sequence.
// A missing file is NotFound (absent); a line that is not hexadecimal counters is DataLoss.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcSoftnetCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcSoftnetCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Cpu {
    uint32_t cpu = 0;  // The line's own CPU column (Linux 5.10+), else its position.
    int columns = 0;   // How many columns the kernel printed (9 to 15).
    // processed, dropped, time_squeeze, 5 unused, cpu_collision, received_rps,
    // flow_limit_count, backlog_len (net/core/net-procfs.c softnet_seq_show).
    std::array<uint64_t, 12> v{};
  };
  // Parses softnet_stat text into `*out` (cleared first; its capacity is reused).
  static Status Parse(std::string_view text, std::vector<Cpu>* out);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  std::vector<Cpu> cpus_;
};

}  // namespace vigil
