// SPDX-License-Identifier: Apache-2.0
// Bounded in-memory history of every series the daemon collects, compressed Gorilla-style
// (delta-of-delta timestamps, XOR-encoded doubles) in fixed-size blocks: a raw tier at collection
// resolution and a downsampled tier (one point per step: last value for counters, mean for
// gauges). Old blocks are dropped by age; the number of series is capped. Thread-safe: one writer
// (the daemon's collection sequence) and any number of readers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/metric.h"
#include "metrics/point.h"

namespace vigil {

struct LabelMatcher {
  enum class Op { kEq, kNe, kRe, kNre };
  std::string name;
  Op op = Op::kEq;
  std::string value;
};

// A selector: metric name (empty = any) and label matchers, as in
// vigil_host_cpu_seconds_total{mode="idle",cpu=~"1.*"}.
struct SeriesSelector {
  std::string name;
  std::vector<LabelMatcher> matchers;
};

// Parses a Prometheus-style selector: `name`, `name{a="b",c!="d",e=~"re",f!~"re"}`, `{a="b"}`.
// Values take \\, \", \', \n and \t escapes; regexes are ECMAScript and fully anchored; a
// missing label matches as ""; "" and "{}" select every series. InvalidArgument on bad syntax.
StatusOr<SeriesSelector> ParseSelector(std::string_view text);

struct SeriesData {
  const MetricDesc* desc = nullptr;
  Labels labels;
  std::vector<Point> points;  // Ascending time.
};

// The newest point of one series, pointing into the store (see SeriesStore::VisitLatest).
struct LatestRef {
  const MetricDesc* desc = nullptr;
  const Labels* labels = nullptr;
  Point point;
};

struct SeriesStoreOptions {
  int64_t raw_retention_ns = 3600LL * 1000 * 1000 * 1000;           // 1 h at collection resolution.
  int64_t downsample_step_ns = 60LL * 1000 * 1000 * 1000;           // 1 min per downsampled point.
  int64_t downsampled_retention_ns = 86400LL * 1000 * 1000 * 1000;  // 24 h.
  size_t max_series = 100000;  // New series beyond this are dropped and counted.
};

struct SeriesStoreStats {
  size_t series = 0;
  size_t raw_points = 0;
  size_t downsampled_points = 0;
  size_t bytes = 0;             // Memory held by compressed blocks, index and labels.
  uint64_t dropped_series = 0;  // Samples refused because their new series was over max_series.
  // Where `bytes` goes, and samples refused for being out of order.
  size_t raw_block_bytes = 0;          // Raw tier: heap held by blocks, headers and slack.
  size_t raw_payload_bytes = 0;        // Raw tier: compressed bytes only.
  size_t downsampled_block_bytes = 0;  // Downsampled tier: as raw_block_bytes.
  uint64_t rejected_samples = 0;       // Samples not after their series' newest point.
};

class SeriesStore {
 public:
  explicit SeriesStore(SeriesStoreOptions options = {});
  ~SeriesStore();
  SeriesStore(const SeriesStore&) = delete;
  SeriesStore& operator=(const SeriesStore&) = delete;

  void Append(const MetricBatch& batch);
  // The newest point of each matching series (series not updated within `max_age_ns` are left out;
  // 0 = no age limit). Ages and retention are measured from the newest sample time appended so
  // far, so the store needs no clock of its own. A series that its source's last complete batch
  // did not write is gone from this view at once (a job label that changed, a device that
  // vanished): it is not also shown under its old labels until it ages out. Results are sorted
  // by name, then labels.
  std::vector<SeriesData> Latest(const SeriesSelector& selector, int64_t max_age_ns = 0) const;
  // The newest point of every series Latest() would answer, sorted as Latest() sorts, handed
  // to `fn` while the store's read lock is held: no label is copied (a /metrics scrape renders
  // straight from the store), the pointers are valid only inside `fn`, and `fn` must not call
  // back into the store.
  void VisitLatest(int64_t max_age_ns,
                   const std::function<void(std::vector<LatestRef>&)>& fn) const;
  // Points in [start_ns, end_ns]. The raw tier answers where it covers the window, the
  // downsampled tier before that. step_ns > 0 thins the answer to at most one point per step.
  std::vector<SeriesData> Range(const SeriesSelector& selector, int64_t start_ns, int64_t end_ns,
                                int64_t step_ns = 0) const;
  SeriesStoreStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
