// SPDX-License-Identifier: Apache-2.0
// proc_meminfo: memory and swap usage from <proc>/meminfo, in bytes (the main fields under names
// of their own, every other kB field as vigil_host_meminfo_bytes{field}), plus per-NUMA-node totals
// from <sys>/devices/system/node/node*/meminfo where the host has them (no node directory: no
// NUMA samples, not an error). Stateless apart from a reused read buffer; owned by the daemon's
// collection sequence. A missing <proc>/meminfo is NotFound (absent); a malformed one DataLoss.
//
// Used memory follows free(1) (procps 3.3.10+): MemTotal - MemFree - Buffers - Cached -
// SReclaimable. Kernels before 3.14 have no MemAvailable: it is then estimated as MemFree +
// Buffers + Cached (an over-estimate: not all page cache is reclaimable), and Parse() reports
// available_estimated = true.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcMeminfoCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcMeminfoCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  // Values in bytes (the file's kB are KiB); HugePages_* are page counts.
  struct Meminfo {
    std::optional<uint64_t> mem_total, mem_free, mem_available, buffers, cached, sreclaimable,
        swap_total, swap_free, dirty, writeback, shmem, hugepages_total, hugepages_free,
        hugepage_size, mem_used;  // mem_used: only in per-node files.
    bool available_estimated = false;
    // free(1)'s used; nullopt when a required field is missing.
    std::optional<uint64_t> Used() const;
  };
  // Parses <proc>/meminfo. DataLoss on a line without a number; MemTotal and MemFree required.
  static StatusOr<Meminfo> Parse(std::string_view text);
  // Parses <sys>/devices/system/node/nodeN/meminfo ("Node 0 MemTotal: 123 kB" lines).
  static StatusOr<Meminfo> ParseNode(std::string_view text);

 private:
  Status CollectNuma(MetricWriter& out);

  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  bool logged_estimate_ = false;
};

}  // namespace vigil
