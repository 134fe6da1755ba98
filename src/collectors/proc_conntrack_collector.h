// SPDX-License-Identifier: Apache-2.0
// proc_conntrack: netfilter connection tracking: entries in the table and its limit
// (<proc>/sys/net/netfilter/nf_conntrack_count, nf_conntrack_max), and the per-CPU event
// counters of <proc>/net/stat/nf_conntrack summed over CPUs (found, invalid, ignore, insert,
// insert_failed, drop, early_drop, search_restart). Stateless; owned by the daemon's collection
// sequence. Without nf_conntrack_count (the nf_conntrack module is not loaded) the collector is
// absent (NotFound); a kernel without the stat file gets only the two gauges. Malformed: DataLoss.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcConntrackCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  // Columns of net/stat/nf_conntrack summed, in the order of Stat::values.
  static constexpr std::array<std::string_view, 8> kStatColumns = {
      "found",         "invalid", "ignore",     "insert",
      "insert_failed", "drop",    "early_drop", "search_restart"};

  explicit ProcConntrackCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Stat {
    std::array<uint64_t, kStatColumns.size()> values{};
    uint64_t found = 0;  // Bit i: kStatColumns[i] is in the header.
  };
  // Parses net/stat/nf_conntrack: a header of column names, then one line of hexadecimal
  // counters per CPU. Columns are found by name (their set differs between kernels).
  static StatusOr<Stat> ParseStat(std::string_view text);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
