// SPDX-License-Identifier: Apache-2.0
// proc_interrupts: interrupts serviced per IRQ and CPU from <proc>/interrupts (numbered device
// IRQs with their chip and device names, and the architecture's named ones: LOC, RES, TLB, ...).
// Off by default, as in node_exporter: CPUs x IRQs series is a lot on a large host. The
// system-wide ERR and MIS lines (no per-CPU counts) are left out. Stateless; owned by the
// daemon's collection sequence. A missing file is NotFound (absent); a header without CPUs or a
// count that is not a number is DataLoss.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcInterruptsCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcInterruptsCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  // Writes the samples of <proc>/interrupts text.
  static Status Parse(std::string_view text, MetricWriter& out);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
