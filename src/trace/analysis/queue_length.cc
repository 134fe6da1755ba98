// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/queue_length.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "trace/model/linker.h"

namespace vigil::trace {
namespace {

using StreamKey = std::pair<int32_t, int64_t>;  // (device, stream)

// One change of a stream's queue in 8 bytes: (time << 1) | later, where `later` marks the change
// that sorts after the other kind at the same time, so sorting plain integers gives time order
// with the ties asked for. A busy stream has two changes per GPU event; at 8 bytes, not 16 plus
// the series copies, the densest traces keep this analysis under 1 MB.
class Changes {
 public:
  explicit Changes(QueueTies ties) : launch_later_(ties == QueueTies::kStartFirst) {}
  void Launch(int64_t ts) { Push(ts * 2 + (launch_later_ ? 1 : 0)); }
  void Start(int64_t ts) { Push(ts * 2 + (launch_later_ ? 0 : 1)); }
  // Sorts, then calls visit(ts, queue length after the change) in order.
  template <typename Visit>
  void Replay(Visit visit) {
    std::sort(keys_.begin(), keys_.end());
    int32_t len = 0;
    for (int64_t k : keys_) {
      const bool later = (k & 1) != 0;
      len += later == launch_later_ ? +1 : -1;
      visit(k >> 1, len);
    }
  }
  size_t size() const { return keys_.size(); }
  // Announces n more changes; the first Launch or Start allocates for all of them.
  void Expect(size_t n) { expected_ += n; }
  void Append(Changes&& other) {
    keys_.insert(keys_.end(), other.keys_.begin(), other.keys_.end());
    other.keys_ = {};
  }

 private:
  void Push(int64_t key) {
    if (keys_.capacity() < expected_) keys_.reserve(expected_);
    keys_.push_back(key);
  }

  bool launch_later_;
  size_t expected_ = 0;
  std::vector<int64_t> keys_;
};

StreamQueueLength Summarise(StreamKey key, Changes changes) {
  StreamQueueLength s;
  s.device = key.first;
  s.stream = key.second;
  const size_t n = changes.size();
  if (n == 0) return s;
  // pandas' describe() over the points, the time-weighted mean and the time at each length, in
  // one pass; the chart keeps every k-th point plus the last.
  std::map<int64_t, uint64_t> counts;
  std::map<int32_t, int64_t> time_at;
  const size_t stride = (n + kMaxQueuePoints - 1) / kMaxQueuePoints;
  double weighted = 0;
  size_t index = 0;
  QueuePoint prev, first, last;
  changes.Replay([&](int64_t ts, int32_t len) {
    ++counts[len];
    if (index > 0) {
      const int64_t d = ts - prev.ts;
      weighted += static_cast<double>(prev.length) * static_cast<double>(d);
      time_at[prev.length] += d;
    } else {
      first = {ts, len};
    }
    if (index % stride == 0) s.series.push_back({ts, len});
    prev = last = {ts, len};
    ++index;
  });
  s.stats = DescribeCounts(counts);
  const int64_t span = last.ts - first.ts;
  s.time_weighted_mean = span > 0 ? weighted / static_cast<double>(span) : s.stats.mean;
  auto at_max = time_at.find(static_cast<int32_t>(s.stats.max));
  s.time_at_max = at_max == time_at.end() ? 0 : at_max->second;
  if (s.series.back().ts != last.ts) s.series.push_back(last);
  return s;
}

QueueLengthSummary Finish(std::map<StreamKey, Changes>* by_stream, int64_t unit) {
  QueueLengthSummary out;
  out.unit_ns = unit;
  for (auto& [key, changes] : *by_stream) {
    out.streams.push_back(Summarise(key, std::move(changes)));
  }
  return out;
}

QueueLengthSummary ComputeDefault(const RankTrace& t, QueueTies ties) {
  const EventTable& e = t.events;
  std::map<StreamKey, Changes> by_stream;
  for (const bool fill : {false, true}) {  // count, then fill: each stream allocates once
    for (uint32_t i : t.links.gpu) {
      uint32_t l = t.links.launcher.empty() ? kNoIndex : t.links.launcher[i];
      if (l == kNoIndex || !IsLaunchName(t.strings.Get(e.name[l]))) continue;
      Changes& c = by_stream.try_emplace(StreamKey{e.device[i], e.stream[i]}, ties).first->second;
      if (!fill) {
        c.Expect(2);
        continue;
      }
      c.Launch(e.ts[l]);
      c.Start(e.ts[i]);
    }
  }
  return Finish(&by_stream, 1);
}

// HTA: runtime launch rows joined to the GPU rows with their correlation (one +1 per pair, on
// the GPU row's stream), and one -1 per GPU row whose correlation has a launch row. HTA groups
// by stream only.
QueueLengthSummary ComputeHta(const RankTrace& t, const HtaRows& rows, QueueTies ties) {
  const EventTable& e = t.events;
  // HTA keeps only launch rows with index_correlation > 0: the GPU row it points to must not be
  // the first row of HTA's frame (file order, without the profiler's own span).
  uint32_t first_row = 0;
  while (first_row < e.size() && e.kind[first_row] == EventKind::kTraceSpan) ++first_row;
  int64_t excluded_corr =
      first_row < e.size() && e.stream[first_row] != -1 ? e.correlation[first_row] : INT64_MIN;
  std::unordered_map<int64_t, std::vector<size_t>> gpu_by_corr;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] != -1) gpu_by_corr[e.correlation[i]].push_back(k);
  }
  std::map<int64_t, Changes> launches, starts;
  std::map<int64_t, int32_t> device_of;
  std::unordered_set<int64_t> launch_corr;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] != -1 || !IsHtaQueueLaunchName(t.strings.Get(e.name[i]))) continue;
    auto it = gpu_by_corr.find(e.correlation[i]);
    if (it == gpu_by_corr.end() || e.correlation[i] == excluded_corr) continue;
    launch_corr.insert(e.correlation[i]);
    for (size_t g : it->second) {
      launches.try_emplace(e.stream[rows.row[g]], ties).first->second.Launch(rows.ts[k]);
    }
  }
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] == -1 || launch_corr.count(e.correlation[i]) == 0) continue;
    starts.try_emplace(e.stream[i], ties).first->second.Start(rows.ts[k]);
    device_of.emplace(e.stream[i], e.device[i]);
  }
  std::map<StreamKey, Changes> by_stream;
  for (auto& [stream, v] : launches) {
    Changes& all =
        by_stream.try_emplace({device_of.count(stream) ? device_of[stream] : -1, stream}, ties)
            .first->second;
    all.Append(std::move(v));
    auto s = starts.find(stream);
    if (s != starts.end()) all.Append(std::move(s->second));
  }
  return Finish(&by_stream, 1000);
}

}  // namespace

bool IsHtaQueueLaunchName(std::string_view n) {
  static const std::unordered_set<std::string_view> kNames = {
      "cudaLaunchKernel",
      "cudaLaunchKernelExC",
      "cuLaunchKernel",
      "cuLaunchKernelEx",
      "cudaMemcpyAsync",
      "cudaMemsetAsync",
      "runFunction - job_prep_and_submit_for_execution",
      "hipLaunchKernel",
      "hipExtModuleLaunchKernel",
      "hipMemsetAsync",
      "hipMemcpyAsync",
      "hipMemcpyWithStream",
  };
  return kNames.count(n) != 0;
}

QueueLengthSummary ComputeQueueLength(const RankTrace& t, const HtaRows* hta_rows, QueueTies ties) {
  return hta_rows != nullptr ? ComputeHta(t, *hta_rows, ties) : ComputeDefault(t, ties);
}

}  // namespace vigil::trace
