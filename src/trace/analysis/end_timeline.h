// SPDX-License-Identifier: Apache-2.0
// Timelines (a CPU thread or a GPU stream) sorted by end time, to answer "what finished last
// before t": the edge the critical paths (single-rank and multi-rank) follow back. They hold row
// numbers only (4 bytes a row) and read end times from the event table, so a rank's timelines
// cost a fraction of its table. Owner: trace. Value types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct EndTimeline {
  const EventTable* events = nullptr;
  std::vector<uint32_t> rows;  // sorted by (end, row)

  int64_t end(size_t k) const { return events->end(rows[k]); }
  // The latest-ending row with end <= t other than `self`, or kNoIndex.
  uint32_t Before(int64_t t, uint32_t self) const {
    auto it = std::upper_bound(rows.begin(), rows.end(), t,
                               [&](int64_t time, uint32_t r) { return time < events->end(r); });
    for (size_t k = static_cast<size_t>(it - rows.begin()); k > 0;) {
      --k;
      if (rows[k] != self) return rows[k];
    }
    return kNoIndex;
  }
};

// Sorts `rows` by end (then row) into a timeline.
inline EndTimeline BuildEndTimeline(const EventTable& e, std::vector<uint32_t> rows) {
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    const int64_t ea = e.end(a), eb = e.end(b);
    return ea != eb ? ea < eb : a < b;
  });
  return EndTimeline{&e, std::move(rows)};
}

// One rank's CPU threads (ops, runtime and driver calls) and GPU streams as timelines, threads
// first, each found from any of its rows by the row's own thread or stream.
class RankTimelines {
 public:
  RankTimelines() = default;
  // The rows for which keep(row) holds.
  template <typename Keep>
  RankTimelines(const EventTable& e, Keep keep) : events_(&e) {
    // Two passes, count then fill, so each timeline is allocated once at its size.
    std::map<Key, std::vector<uint32_t>> threads, streams;
    std::map<Key, size_t> thread_rows, stream_rows;
    for (const bool fill : {false, true}) {
      for (uint32_t i = 0; i < e.size(); ++i) {
        const EventKind k = e.kind[i];
        if (OnThread(k) && keep(i)) {
          const Key key{e.pid[i], e.tid[i]};
          fill ? threads[key].push_back(i) : void(++thread_rows[key]);
        } else if (IsGpuKind(k) && keep(i)) {
          const Key key{e.device[i], e.stream[i]};
          fill ? streams[key].push_back(i) : void(++stream_rows[key]);
        }
      }
      for (const auto& [key, n] : thread_rows) threads[key].reserve(n);
      for (const auto& [key, n] : stream_rows) streams[key].reserve(n);
    }
    for (auto* group : {&threads, &streams}) {
      for (auto& [key, rows] : *group) {
        (group == &threads ? thread_line_ : stream_line_)[key] =
            static_cast<uint32_t>(lines_.size());
        lines_.push_back(BuildEndTimeline(e, std::move(rows)));
        rows = {};
      }
    }
  }

  const std::vector<EndTimeline>& lines() const { return lines_; }

  // The latest-ending row on `row`'s own thread or stream with end <= t, or kNoIndex.
  uint32_t Before(uint32_t row, int64_t t) const {
    const EventTable& e = *events_;
    const EventKind k = e.kind[row];
    const std::map<Key, uint32_t>* index = OnThread(k)    ? &thread_line_
                                           : IsGpuKind(k) ? &stream_line_
                                                          : nullptr;
    if (index == nullptr) return kNoIndex;
    auto it =
        index->find(OnThread(k) ? Key{e.pid[row], e.tid[row]} : Key{e.device[row], e.stream[row]});
    return it == index->end() ? kNoIndex : lines_[it->second].Before(t, row);
  }

 private:
  using Key = std::pair<int64_t, int64_t>;  // (pid, tid) or (device, stream)
  static bool OnThread(EventKind k) {
    return k == EventKind::kCpuOp || k == EventKind::kRuntime || k == EventKind::kDriver;
  }

  const EventTable* events_ = nullptr;
  std::map<Key, uint32_t> thread_line_, stream_line_;
  std::vector<EndTimeline> lines_;
};

}  // namespace vigil::trace
