// SPDX-License-Identifier: Apache-2.0
// proc_loadavg: 1, 5 and 15 minute load averages and runnable/total task counts from
// <proc>/loadavg. Stateless; owned by the daemon's collection sequence. A missing file is
// NotFound (absent); a malformed one is DataLoss.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcLoadavgCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcLoadavgCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Loadavg {
    double load1 = 0;
    double load5 = 0;
    double load15 = 0;
    uint64_t runnable = 0;  // Currently runnable scheduling entities.
    uint64_t tasks = 0;     // Scheduling entities (processes and threads) that exist.
  };
  // Parses "0.52 0.58 0.59 2/345 12345". DataLoss when truncated or not numbers.
  static StatusOr<Loadavg> Parse(std::string_view text);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
