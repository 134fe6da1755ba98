// SPDX-License-Identifier: Apache-2.0
// The daemon's own health as metrics: CPU seconds and resident memory of this process (always
// read from the real /proc/self, whatever --proc-root says), the series store's size, uptime,
// sink drops, and vigil_daemon_info{rpc_address,version} 1. Runs on the scheduler's sequence like
// any collector; the stats callbacks must be thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "metrics/series_store.h"

namespace vigil::daemon {

inline constexpr char kVersion[] = "0.1.0";

struct SinkDrops {
  std::string sink;
  uint64_t dropped = 0;
};

class SelfCollector : public Collector {
 public:
  // `rpc_address` (may be null) gives the control RPC address others reach this daemon at; it
  // becomes the rpc_address label of vigil_daemon_info, which vigil-fleet records per host.
  SelfCollector(std::function<SeriesStoreStats()> store_stats,
                std::function<std::vector<SinkDrops>()> sink_drops, int64_t start_unix_ns,
                std::function<std::string()> rpc_address = nullptr);
  Status Collect(MetricWriter& out) override;

  // Every family this collector emits (for the naming lint).
  static std::vector<const MetricDesc*> Metrics();

 private:
  std::function<SeriesStoreStats()> store_stats_;
  std::function<std::vector<SinkDrops>()> sink_drops_;
  int64_t start_unix_ns_;
  std::function<std::string()> rpc_address_;
  std::string buf_;
};

}  // namespace vigil::daemon
