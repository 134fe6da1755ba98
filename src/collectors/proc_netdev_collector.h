// SPDX-License-Identifier: Apache-2.0
// proc_netdev: per interface receive/transmit bytes, packets, errors, drops and the rarer
// columns (FIFO, frame, carrier errors, collisions, compressed, multicast) from <proc>/net/dev,
// and host TCP counters (segments, retransmissions, resets, opens, listen-queue overflows) from
// <proc>/net/snmp and <proc>/net/netstat. Interfaces matching `interface_exclude` (ECMAScript
// regex, default "^lo$") are skipped. InfiniBand port counters are a separate collector
// (sys_infiniband). Owned by the daemon's collection sequence. No <proc>/net/dev: NotFound
// (absent). A missing net/snmp or net/netstat keeps the interface samples and returns that error; a
// malformed file is DataLoss.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

struct ProcNetdevOptions {
  static constexpr std::string_view kDefaultInterfaceExclude = "^lo$";
  std::string interface_exclude = std::string(kDefaultInterfaceExclude);
};

class ProcNetdevCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcNetdevCollector(HostPaths paths, ProcNetdevOptions options = {});
  Status Collect(MetricWriter& out) override;

  struct Interface {
    std::string_view name;  // Points into the parsed text.
    // rx bytes, packets, errs, drop, fifo, frame, compressed, multicast, then tx bytes, packets,
    // errs, drop, fifo, colls, carrier, compressed (net/core/net-procfs.c dev_seq_printf_stats).
    std::array<uint64_t, 16> v{};
  };
  // Parses <proc>/net/dev. DataLoss on a line with fewer than 16 counters or a bad number.
  static StatusOr<std::vector<Interface>> ParseNetDev(std::string_view text);
  // Parses the `section` ("Tcp", "TcpExt") of a net/snmp or net/netstat file: a header line of
  // names followed by a line of values. Empty when the section is absent; DataLoss when the two
  // lines disagree or a value is not a number.
  using Pairs = std::vector<std::pair<std::string_view, int64_t>>;
  static StatusOr<Pairs> ParseSnmpSection(std::string_view text, std::string_view section);

 private:
  Status CollectTcp(MetricWriter& out);

  HostPaths paths_;
  std::optional<std::regex> exclude_;
  Status options_status_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
