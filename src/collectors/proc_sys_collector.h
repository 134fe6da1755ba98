// SPDX-License-Identifier: Apache-2.0
// proc_sys: kernel-wide counters under <proc>/sys: file handles allocated and their limit
// (fs/file-nr) and the random pool's entropy and size (kernel/random/entropy_avail, poolsize).
// Stateless; owned by the daemon's collection sequence. No fs/file-nr: NotFound (absent, e.g. a
// container without /proc/sys). A missing random file keeps the file-handle samples and is
// DataLoss, as is a value that is not a number.
#pragma once

#include <string>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcSysCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcSysCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
