// SPDX-License-Identifier: Apache-2.0
// daemon_self: vigild's own health as metrics: CPU seconds and resident memory of this process
// (always read from the real /proc/self, whatever --proc-root says), the series store's size,
// uptime, sink drops, and vigil_daemon_info{rpc_address,version} 1. What only the daemon knows
// comes in through DaemonSelfCollectorOptions' callbacks, which must be thread-safe; without them
// (vigild --once, a tool) the collector is absent. The store's size is counted exactly, which
// walks every series, so it is asked at most every kStoreStatsEvery and reported from then until
// the next. Runs on the scheduler's sequence like any collector.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/time_util.h"
#include "collectors/collector.h"
#include "collectors/kept_files.h"
#include "metrics/series_store.h"

namespace vigil {

struct SinkDrops {
  std::string sink;
  uint64_t dropped = 0;
};

struct DaemonSelfCollectorOptions {
  std::function<SeriesStoreStats()> store_stats;       // Null: not a running daemon.
  std::function<std::vector<SinkDrops>()> sink_drops;  // May be null.
  int64_t start_unix_ns = 0;                           // 0: when the collector was made.
  // The control RPC address others reach this daemon at (may be null); it becomes the
  // rpc_address label of vigil_daemon_info, which vigil-fleet records per host.
  std::function<std::string()> rpc_address;
};

class DaemonSelfCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  static constexpr int64_t kStoreStatsEvery = 10 * kNanosPerSecond;

  explicit DaemonSelfCollector(DaemonSelfCollectorOptions options);
  Status Collect(MetricWriter& out) override;

 private:
  DaemonSelfCollectorOptions options_;
  std::string buf_;
  KeptFiles files_;  // Its files, open between ticks.
  SeriesStoreStats store_stats_;
  int64_t store_stats_at_ns_ = 0;  // MonotonicNanos() of store_stats_; 0 = never asked.
};

}  // namespace vigil
