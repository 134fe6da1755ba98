// SPDX-License-Identifier: Apache-2.0
#include "metrics/series_history.h"

#include <limits>
#include <span>
#include <utility>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil {
namespace {

// A block spans at most a quarter of its tier's retention, so data outlives its retention by at
// most that much before its block is dropped.
constexpr int64_t kBlockSpanDivisor = 4;

void CollectBlock(std::span<const uint8_t> data, uint32_t count, int64_t start_ns, int64_t end_ns,
                  std::vector<Point>* out) {
  GorillaDecoder decoder(data, count);
  Point p;
  while (decoder.Next(&p)) {
    if (p.time_ns > end_ns) {
      break;
    }
    if (p.time_ns >= start_ns) {
      out->push_back(p);
    }
  }
  if (!decoder.status().ok()) {
    VIGIL_LOG_EVERY_N_SEC(ERROR, 60, "series store block unreadable: err={}",
                          decoder.status().message());
  }
}

}  // namespace

Status BlockTier::Append(int64_t time_ns, double value) {
  const bool has_last = !open_.empty() || !sealed_.empty();
  const int64_t last = !open_.empty()    ? open_.last_time()
                       : sealed_.empty() ? 0
                                         : sealed_.back().last_time;
  if (has_last && time_ns <= last) {
    return InvalidArgumentError("series store: out-of-order point");
  }
  if (!open_.empty() && (open_.count() >= kMaxPointsPerBlock ||
                         (max_span_ns_ > 0 && time_ns - open_.first_time() >= max_span_ns_))) {
    sealed_.push_back(open_.Seal());
  }
  return open_.Append(time_ns, value);
}

void BlockTier::DropBefore(int64_t cutoff_ns) {
  size_t drop = 0;
  while (drop < sealed_.size() && sealed_[drop].last_time < cutoff_ns) {
    ++drop;
  }
  if (drop > 0) {
    sealed_.erase(sealed_.begin(), sealed_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  if (sealed_.empty() && !open_.empty() && open_.last_time() < cutoff_ns) {
    open_.Reset();
  }
  if (sealed_.empty() && sealed_.capacity() > 0) {
    std::vector<GorillaBlock>().swap(sealed_);
  }
}

void BlockTier::Collect(int64_t start_ns, int64_t end_ns, std::vector<Point>* out) const {
  for (const GorillaBlock& block : sealed_) {
    if (block.last_time < start_ns || block.first_time > end_ns) {
      continue;
    }
    CollectBlock(block.bytes(), block.count, start_ns, end_ns, out);
  }
  if (!open_.empty() && open_.last_time() >= start_ns && open_.first_time() <= end_ns) {
    CollectBlock(open_.bytes(), open_.count(), start_ns, end_ns, out);
  }
}

int64_t BlockTier::first_time() const {
  return sealed_.empty() ? open_.first_time() : sealed_.front().first_time;
}

size_t BlockTier::points() const {
  size_t n = open_.count();
  for (const GorillaBlock& block : sealed_) {
    n += block.count;
  }
  return n;
}

size_t BlockTier::heap_bytes() const {
  size_t n = HeapBytes(sealed_.capacity() * sizeof(GorillaBlock)) + open_.heap_bytes();
  for (const GorillaBlock& block : sealed_) {
    n += block.heap_bytes();
  }
  return n;
}

size_t BlockTier::payload_bytes() const {
  size_t n = open_.bytes().size();
  for (const GorillaBlock& block : sealed_) {
    n += block.size;
  }
  return n;
}

SeriesHistory::SeriesHistory(const MetricDesc* desc, const SeriesHistoryOptions& options)
    : desc_(desc),
      options_(options),
      raw_(options.raw_retention_ns / kBlockSpanDivisor),
      downsampled_(options.downsampled_retention_ns / kBlockSpanDivisor) {}

Status SeriesHistory::Append(int64_t time_ns, double value) {
  if (has_latest_ && time_ns <= latest_.time_ns) {
    return InvalidArgumentError("series store: point at " + std::to_string(time_ns) +
                                " is not after the newest point " +
                                std::to_string(latest_.time_ns));
  }
  VIGIL_RETURN_IF_ERROR(raw_.Append(time_ns, value));
  has_latest_ = true;
  latest_ = Point{time_ns, value};
  const int64_t step = options_.downsample_step_ns;
  if (step <= 0) {
    return OkStatus();
  }
  const int64_t window = FloorDiv(time_ns, step) * step;
  if (window_count_ > 0 && window != window_start_) {
    FlushWindow();
  }
  if (window_count_ == 0) {
    window_start_ = window;
    window_sum_ = 0;
  }
  window_sum_ += value;
  ++window_count_;
  window_last_ = latest_;
  return OkStatus();
}

void SeriesHistory::FlushWindow() {
  if (window_count_ == 0) {
    return;
  }
  const double value = desc_ != nullptr && desc_->kind == MetricKind::kCounter
                           ? window_last_.value
                           : window_sum_ / static_cast<double>(window_count_);
  // Times only grow, so this cannot be out of order; a failure would only lose one point.
  downsampled_.Append(window_last_.time_ns, value).IgnoreError();
  window_count_ = 0;
  window_sum_ = 0;
}

void SeriesHistory::Expire(int64_t now_ns) {
  const int64_t step = options_.downsample_step_ns;
  // One step of grace lets a slightly late batch still land in its window.
  if (window_count_ > 0 && step > 0 && now_ns - window_start_ >= 2 * step) {
    FlushWindow();
  }
  raw_.DropBefore(now_ns - options_.raw_retention_ns);
  downsampled_.DropBefore(step > 0 ? now_ns - options_.downsampled_retention_ns
                                   : std::numeric_limits<int64_t>::max());
}

void SeriesHistory::Collect(int64_t start_ns, int64_t end_ns, std::vector<Point>* out) const {
  if (start_ns > end_ns) {
    return;
  }
  const int64_t raw_first = raw_.empty() ? std::numeric_limits<int64_t>::max() : raw_.first_time();
  if (start_ns < raw_first) {
    downsampled_.Collect(start_ns, std::min(end_ns, raw_first - 1), out);
  }
  raw_.Collect(start_ns, end_ns, out);
}

bool SeriesHistory::empty() const {
  return raw_.empty() && downsampled_.empty() && window_count_ == 0;
}

}  // namespace vigil
