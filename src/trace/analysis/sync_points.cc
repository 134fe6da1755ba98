// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/sync_points.h"

#include <algorithm>

#include "trace/model/linker.h"

namespace vigil::trace {

SyncAnalysis AnalyzeSyncPoints(const RankTrace& t) {
  const EventTable& e = t.events;
  const Links& l = t.links;
  SyncAnalysis out;
  std::vector<SyncPoint> points;
  std::vector<uint64_t> per_step(l.steps.size(), 0);
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kRuntime && e.kind[i] != EventKind::kDriver) continue;
    std::string_view api = t.strings.Get(e.name[i]);
    if (!IsSyncName(api)) continue;
    SyncPoint p;
    p.row = i;
    // Walk up to the outermost CPU op of the chain directly around the call.
    for (uint32_t up = l.parent.empty() ? kNoIndex : l.parent[i]; up != kNoIndex;
         up = l.parent[up]) {
      if (e.kind[up] == EventKind::kCpuOp) {
        p.cause_row = up;
      } else if (p.cause_row != kNoIndex) {
        break;
      }
    }
    ++out.count;
    out.total_ns += e.dur[i];
    SyncCount& a = out.by_api[std::string(api)];
    ++a.count;
    a.dur_ns += e.dur[i];
    std::string cause =
        p.cause_row == kNoIndex ? "(none)" : std::string(t.strings.Get(e.name[p.cause_row]));
    SyncCount& c = out.by_cause[cause];
    ++c.count;
    c.dur_ns += e.dur[i];
    points.push_back(p);
    for (size_t s = 0; s < l.steps.size(); ++s) {
      if (e.ts[i] >= l.steps[s].ts && e.ts[i] < l.steps[s].ts + l.steps[s].dur) ++per_step[s];
    }
  }
  for (uint64_t n : per_step) out.max_per_step = std::max(out.max_per_step, n);
  std::sort(points.begin(), points.end(), [&](const SyncPoint& a, const SyncPoint& b) {
    return e.dur[a.row] != e.dur[b.row] ? e.dur[a.row] > e.dur[b.row] : a.row < b.row;
  });
  if (points.size() > 20) points.resize(20);
  out.longest = std::move(points);
  return out;
}

}  // namespace vigil::trace
