// SPDX-License-Identifier: Apache-2.0
// proc_vmstat: paging, swapping, page faults and OOM kills from <proc>/vmstat (the fields
// node_exporter's vmstat collector exports by default), as bytes and counts. Stateless; owned by
// the daemon's collection sequence. A missing file is NotFound (absent); a malformed value is
// DataLoss. A field the kernel does not print (oom_kill before Linux 4.13) is left out.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcVmstatCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  // The fields read, in the order of Vmstat::values.
  static constexpr std::array<std::string_view, 7> kFields = {
      "pgpgin", "pgpgout", "pswpin", "pswpout", "pgfault", "pgmajfault", "oom_kill"};

  // `page_size` converts swapped pages to bytes; 0 means this host's page size.
  explicit ProcVmstatCollector(HostPaths paths, double page_size = 0);
  Status Collect(MetricWriter& out) override;

  struct Vmstat {
    std::array<uint64_t, kFields.size()> values{};
    uint64_t found = 0;  // Bit i: kFields[i] was present.
  };
  // Parses <proc>/vmstat text ("name value" lines). DataLoss on a bad number.
  static StatusOr<Vmstat> Parse(std::string_view text);

 private:
  HostPaths paths_;
  double page_size_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
