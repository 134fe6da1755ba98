// SPDX-License-Identifier: Apache-2.0
// The stored history of one series: a raw tier of Gorilla blocks at collection resolution and a
// downsampled tier (one point per step: the last value for counters, the mean for gauges), each
// dropped block by block once it falls out of its retention. Downsampling happens as points
// arrive, so the downsampled tier also covers the raw tier's window. Owned by SeriesStore; not
// thread-safe on its own (the store's lock guards it).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "metrics/gorilla_block.h"
#include "metrics/metric.h"
#include "metrics/point.h"

namespace vigil {

struct SeriesHistoryOptions {
  int64_t raw_retention_ns = 0;
  int64_t downsample_step_ns = 0;  // <= 0 disables the downsampled tier.
  int64_t downsampled_retention_ns = 0;
};

// A run of Gorilla blocks: sealed ones oldest first, then the open one.
class BlockTier {
 public:
  static constexpr uint32_t kMaxPointsPerBlock = 240;

  // `max_span_ns` seals a block early when it would span more than this much time.
  explicit BlockTier(int64_t max_span_ns) : max_span_ns_(max_span_ns) {}

  Status Append(int64_t time_ns, double value);
  // Drops blocks whose newest point is older than `cutoff_ns`.
  void DropBefore(int64_t cutoff_ns);
  // Appends the points with start_ns <= time <= end_ns (ascending) to *out.
  void Collect(int64_t start_ns, int64_t end_ns, std::vector<Point>* out) const;

  bool empty() const { return sealed_.empty() && open_.empty(); }
  int64_t first_time() const;  // Undefined when empty().
  size_t points() const;
  size_t heap_bytes() const;
  size_t payload_bytes() const;  // Compressed bytes only, excluding headers and slack.

 private:
  int64_t max_span_ns_;
  std::vector<GorillaBlock> sealed_;
  GorillaEncoder open_;
};

class SeriesHistory {
 public:
  SeriesHistory(const MetricDesc* desc, const SeriesHistoryOptions& options);

  // InvalidArgument when time_ns is not after the newest point (nothing is stored).
  Status Append(int64_t time_ns, double value);
  // Applies retention relative to `now_ns`; closes a downsample window that `now_ns` has passed.
  void Expire(int64_t now_ns);
  // Points in [start_ns, end_ns]: downsampled ones before the raw tier's first point, then raw.
  void Collect(int64_t start_ns, int64_t end_ns, std::vector<Point>* out) const;

  // True once no data is left in either tier (the series can be forgotten).
  bool empty() const;
  bool has_latest() const { return has_latest_; }
  Point latest() const { return latest_; }
  const MetricDesc* desc() const { return desc_; }
  size_t raw_points() const { return raw_.points(); }
  size_t downsampled_points() const { return downsampled_.points(); }
  // Heap bytes owned, not counting sizeof(SeriesHistory).
  size_t heap_bytes() const { return raw_heap_bytes() + downsampled_heap_bytes(); }
  size_t raw_heap_bytes() const { return raw_.heap_bytes(); }
  size_t downsampled_heap_bytes() const { return downsampled_.heap_bytes(); }
  size_t raw_payload_bytes() const { return raw_.payload_bytes(); }
  size_t downsampled_payload_bytes() const { return downsampled_.payload_bytes(); }

 private:
  void FlushWindow();

  const MetricDesc* desc_;
  SeriesHistoryOptions options_;
  BlockTier raw_;
  BlockTier downsampled_;
  bool has_latest_ = false;
  Point latest_;
  // The downsample window being filled: [window_start_, window_start_ + step).
  int64_t window_start_ = 0;
  uint32_t window_count_ = 0;
  double window_sum_ = 0;
  Point window_last_;
};

}  // namespace vigil
