// SPDX-License-Identifier: Apache-2.0
// One timeline (a CPU thread or a GPU stream) sorted by end time, to answer "what finished last
// before t": the edge the critical paths (single-rank and multi-rank) follow back. Owner: trace.
// Value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct EndTimeline {
  std::vector<uint32_t> rows;
  std::vector<int64_t> ends;
  // The latest-ending row with end <= t other than `self`, or kNoIndex.
  uint32_t Before(int64_t t, uint32_t self) const {
    size_t k = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), t) - ends.begin());
    while (k > 0) {
      --k;
      if (rows[k] != self) return rows[k];
    }
    return kNoIndex;
  }
};

// Sorts `rows` by end (then row) into a timeline.
inline EndTimeline BuildEndTimeline(const EventTable& e, std::vector<uint32_t> rows) {
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    return e.end(a) != e.end(b) ? e.end(a) < e.end(b) : a < b;
  });
  EndTimeline t;
  t.rows = std::move(rows);
  t.ends.reserve(t.rows.size());
  for (uint32_t r : t.rows) t.ends.push_back(e.end(r));
  return t;
}

}  // namespace vigil::trace
