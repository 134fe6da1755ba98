// SPDX-License-Identifier: Apache-2.0
// proc_sockstat: sockets in use per protocol and IP version, TCP orphan/time-wait/allocated
// sockets, TCP and UDP socket buffer memory, and IP reassembly queues from <proc>/net/sockstat
// and <proc>/net/sockstat6. Stateless; owned by the daemon's collection sequence.
// No <proc>/net/sockstat: NotFound (absent). No sockstat6 (IPv6 disabled): no IPv6 series.
// A line whose values are not numbers is DataLoss.
#pragma once

#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcSockstatCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  // `page_size` converts the `mem` fields (pages) to bytes; 0 means this host's page size.
  explicit ProcSockstatCollector(HostPaths paths, double page_size = 0);
  Status Collect(MetricWriter& out) override;

  // Writes the samples of one sockstat or sockstat6 text. Lines of unknown protocols and keys
  // are skipped (MPTCP, newer kernels' additions).
  static Status Parse(std::string_view text, double page_size, MetricWriter& out);

 private:
  HostPaths paths_;
  double page_size_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
