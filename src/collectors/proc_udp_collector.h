// SPDX-License-Identifier: Apache-2.0
// proc_udp: bytes queued in UDP sockets, receive and transmit, summed over every socket of
// <proc>/net/udp (IPv4) and <proc>/net/udp6 (IPv6): data the applications have not read yet or
// the NICs have not sent. Stateless; owned by the daemon's collection sequence. No net/udp:
// NotFound (absent); no net/udp6 (IPv6 disabled): no IPv6 series. A queue column that is not
// "tx:rx" in hexadecimal is DataLoss.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collectors/collector.h"
#include "collectors/kept_files.h"

namespace vigil {

class ProcUdpCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit ProcUdpCollector(HostPaths paths);
  Status Collect(MetricWriter& out) override;

  struct Queues {
    uint64_t transmit = 0;
    uint64_t receive = 0;
  };
  // Sums the tx_queue:rx_queue column of a net/udp or net/udp6 text.
  static StatusOr<Queues> Parse(std::string_view text);

 private:
  HostPaths paths_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
};

}  // namespace vigil
