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

struct Change {
  int64_t ts;
  int32_t delta;
};

using StreamKey = std::pair<int32_t, int64_t>;  // (device, stream)

// Sorted by time, ties in the order asked for.
StreamQueueLength Summarise(StreamKey key, std::vector<Change> changes, QueueTies ties) {
  int32_t first = ties == QueueTies::kLaunchFirst ? +1 : -1;
  std::stable_sort(changes.begin(), changes.end(), [&](const Change& a, const Change& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    return a.delta == first && b.delta != first;
  });
  StreamQueueLength s;
  s.device = key.first;
  s.stream = key.second;
  std::vector<double> values;
  values.reserve(changes.size());
  std::vector<QueuePoint> points;
  points.reserve(changes.size());
  int32_t len = 0;
  for (const Change& c : changes) {
    len += c.delta;
    values.push_back(len);
    points.push_back({c.ts, len});
  }
  s.stats = DescribeValues(values);
  if (points.empty()) return s;
  int64_t span = points.back().ts - points.front().ts;
  double weighted = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    int64_t d = points[i + 1].ts - points[i].ts;
    weighted += static_cast<double>(points[i].length) * static_cast<double>(d);
    if (points[i].length == static_cast<int32_t>(s.stats.max)) s.time_at_max += d;
  }
  s.time_weighted_mean = span > 0 ? weighted / static_cast<double>(span) : s.stats.mean;
  // Keep the chart small: every k-th point, plus the last.
  size_t stride = (points.size() + kMaxQueuePoints - 1) / kMaxQueuePoints;
  for (size_t i = 0; i < points.size(); i += stride) s.series.push_back(points[i]);
  if (s.series.back().ts != points.back().ts) s.series.push_back(points.back());
  return s;
}

QueueLengthSummary Finish(std::map<StreamKey, std::vector<Change>>* by_stream, int64_t unit,
                          QueueTies ties) {
  QueueLengthSummary out;
  out.unit_ns = unit;
  for (auto& [key, changes] : *by_stream) {
    out.streams.push_back(Summarise(key, std::move(changes), ties));
  }
  return out;
}

QueueLengthSummary ComputeDefault(const RankTrace& t, QueueTies ties) {
  const EventTable& e = t.events;
  std::map<StreamKey, std::vector<Change>> launches, starts;
  for (uint32_t i : t.links.gpu) {
    uint32_t l = t.links.launcher.empty() ? kNoIndex : t.links.launcher[i];
    if (l == kNoIndex || !IsLaunchName(t.strings.Get(e.name[l]))) continue;
    StreamKey key{e.device[i], e.stream[i]};
    launches[key].push_back({e.ts[l], +1});
    starts[key].push_back({e.ts[i], -1});
  }
  for (auto& [key, v] : starts) {
    std::vector<Change>& all = launches[key];
    all.insert(all.end(), v.begin(), v.end());
  }
  return Finish(&launches, 1, ties);
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
  std::map<int64_t, std::vector<Change>> launches, starts;
  std::map<int64_t, int32_t> device_of;
  std::unordered_set<int64_t> launch_corr;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] != -1 || !IsHtaQueueLaunchName(t.strings.Get(e.name[i]))) continue;
    auto it = gpu_by_corr.find(e.correlation[i]);
    if (it == gpu_by_corr.end() || e.correlation[i] == excluded_corr) continue;
    launch_corr.insert(e.correlation[i]);
    for (size_t g : it->second) launches[e.stream[rows.row[g]]].push_back({rows.ts[k], +1});
  }
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] == -1 || launch_corr.count(e.correlation[i]) == 0) continue;
    starts[e.stream[i]].push_back({rows.ts[k], -1});
    device_of.emplace(e.stream[i], e.device[i]);
  }
  std::map<StreamKey, std::vector<Change>> by_stream;
  for (auto& [stream, v] : launches) {
    std::vector<Change>& all =
        by_stream[{device_of.count(stream) ? device_of[stream] : -1, stream}];
    all = std::move(v);
    const std::vector<Change>& s = starts[stream];
    all.insert(all.end(), s.begin(), s.end());
  }
  return Finish(&by_stream, 1000, ties);
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
