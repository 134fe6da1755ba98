// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/multi_rank_critical_path.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "trace/analysis/critical_path.h"
#include "trace/analysis/multi_rank_what_if.h"
#include "trace/analysis/path_graph.h"

namespace vigil::trace {
namespace {

// The slowest ProfilerStep every rank has (not the last one unless it is the only one).
int64_t ChooseStep(const std::vector<const RankTrace*>& ranks) {
  std::map<int64_t, std::pair<int, int64_t>> steps;  // number -> (ranks, max duration)
  for (const RankTrace* t : ranks) {
    std::set<int64_t> seen;
    for (const Step& s : t->links.steps) {
      if (!seen.insert(s.number).second) continue;
      auto& [n, dur] = steps[s.number];
      ++n;
      dur = std::max(dur, s.dur);
    }
  }
  std::vector<std::pair<int64_t, int64_t>> common;  // (number, max duration)
  for (const auto& [number, v] : steps) {
    if (v.first == static_cast<int>(ranks.size())) common.emplace_back(number, v.second);
  }
  if (common.empty()) return -1;
  if (common.size() >= 2) common.pop_back();
  auto it = std::max_element(common.begin(), common.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; });
  return it->first;
}

PathCategory CategoryOf(const PathEdge& e) {
  switch (e.part) {
    case PathPart::kGpuCompute:
    case PathPart::kGpuMemory:
      return PathCategory::kCompute;
    case PathPart::kGpuComm:
      return PathCategory::kCommunication;
    case PathPart::kCpu:
      return PathCategory::kLaunch;
    case PathPart::kSync:
      return PathCategory::kSync;
    case PathPart::kGap:
      break;
  }
  return e.kind == PathEdgeKind::kLaunch ? PathCategory::kLaunch : PathCategory::kIdle;
}

}  // namespace

std::string_view PathCategoryName(PathCategory c) {
  switch (c) {
    case PathCategory::kCompute:
      return "compute";
    case PathCategory::kCommunication:
      return "communication";
    case PathCategory::kLaunch:
      return "launch";
    case PathCategory::kSync:
      return "sync";
    case PathCategory::kIdle:
      return "idle";
  }
  return "idle";
}

std::string MultiRankCriticalPath::BoundBy() const {
  int best = 0;
  for (int c = 1; c < 5; ++c) {
    if (by_category[c] > by_category[best]) best = c;
  }
  return by_category[best] > 0 ? std::string(PathCategoryName(static_cast<PathCategory>(best)))
                               : "none";
}

std::vector<size_t> MultiRankCriticalPath::TopSegments(size_t n) const {
  std::vector<size_t> idx(segments.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto longer = [&](size_t a, size_t b) {
    int64_t da = segments[a].end - segments[a].start, db = segments[b].end - segments[b].start;
    return da != db ? da > db : a < b;
  };
  n = std::min(n, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<ptrdiff_t>(n), idx.end(), longer);
  idx.resize(n);
  return idx;
}

MultiRankCriticalPath ComputeMultiRankCriticalPath(const std::vector<const RankTrace*>& ranks,
                                                   const KernelClassifier& classifier,
                                                   size_t max_nodes) {
  MultiRankCriticalPath out;
  if (ranks.size() < 2) {
    out.note = "needs at least two ranks";
    return out;
  }
  out.matches = MatchCollectives(ranks, classifier);
  out.step = ChooseStep(ranks);
  std::vector<PathWindow> windows(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const Step& s : ranks[r]->links.steps) {
      if (s.number == out.step && !windows[r].windowed) windows[r] = {true, s.ts, s.ts + s.dur};
    }
  }
  std::vector<JoinedCollective> joined;
  std::unordered_map<uint64_t, uint32_t> collective_of;  // (rank index, row) -> collective
  for (uint32_t c = 0; c < out.matches.collectives.size(); ++c) {
    JoinedCollective j;
    for (const CollectiveMember& m : out.matches.collectives[c].members) {
      collective_of[uint64_t{m.rank_index} << 32 | m.row] = c;
      // Only ranks whose clock is aligned join: an unknown offset would invent the waits.
      if (out.matches.aligned[m.rank_index]) j.members.emplace_back(m.rank_index, m.row);
    }
    joined.push_back(std::move(j));
  }
  const PathGraph g =
      BuildJoinedPathGraph(ranks, out.matches.offset_ns, windows, joined, classifier);
  if (g.nodes() == 0) {
    out.note = "no events in the window";
    return out;
  }
  const std::vector<int64_t> weight = MeasuredWeights(g);
  std::vector<std::pair<uint32_t, uint32_t>> steps;  // (node, in-edge), sink first
  const CriticalPath cp = WalkCriticalPath(g, g.time, weight, g.slack, &steps);
  out.valid = true;
  out.start = cp.start;
  out.end = cp.end;
  std::vector<int64_t> rank_ns(ranks.size(), 0);
  auto add = [&](uint32_t ev, int64_t lo, int64_t hi, PathCategory c) {
    if (hi <= lo) return;
    out.by_category[static_cast<int>(c)] += hi - lo;
    rank_ns[g.rank[ev]] += hi - lo;
    out.segments.push_back({g.rank[ev], g.row[ev], lo, hi, c});
  };
  for (size_t i = 0; i < steps.size() && i < max_nodes; ++i) {
    const auto [v, k] = steps[i];
    if (k == kNoIndex) break;
    const PathEdge& e = g.in[k];
    const int64_t from = g.time[e.from];
    const uint32_t ev = v / 2, src = e.from / 2;
    add(ev, from + weight[k], g.time[v], PathCategory::kIdle);  // the node's slack
    add(e.kind == PathEdgeKind::kThread ? src : ev, from, from + weight[k], CategoryOf(e));
    if (e.kind == PathEdgeKind::kCollective && g.rank[src] != g.rank[ev]) {
      // The collective ended after the last arrival, on another rank: the path crosses there.
      auto co = collective_of.find(uint64_t{g.rank[ev]} << 32 | g.row[ev]);
      if (co == collective_of.end()) continue;
      int64_t second = INT64_MIN;
      for (const CollectiveMember& m : out.matches.collectives[co->second].members) {
        const uint32_t mev = g.EventOf(m.rank_index, m.row);
        if (mev != kNoIndex && mev != src) second = std::max(second, g.time[2 * mev]);
      }
      out.crossings.push_back({co->second, g.rank[ev], g.rank[src], from, from - g.time[2 * ev],
                               second == INT64_MIN ? 0 : from - second});
    }
  }
  std::reverse(out.segments.begin(), out.segments.end());
  std::reverse(out.crossings.begin(), out.crossings.end());
  const int64_t len = out.Length();
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    out.ranks.push_back({r, ranks[r]->meta.rank, rank_ns[r],
                         len > 0 ? 100.0 * static_cast<double>(rank_ns[r]) / len : 0.0});
  }
  out.what_if.push_back(ProjectCommOverlapped(g, cp));
  out.what_if.push_back(ProjectSlowestRankAtMedian(g, cp));
  const std::vector<RankArrivals> arrivals = LastArrivals(ranks, out.matches);
  auto late = std::max_element(arrivals.begin(), arrivals.end(),
                               [](const auto& a, const auto& b) { return a.late_ns < b.late_ns; });
  if (late != arrivals.end() && late->late_ns > 0) {
    out.what_if.push_back(ProjectRankAtMedian(g, cp, static_cast<uint32_t>(late - arrivals.begin()),
                                              "last_arriver_at_median"));
  }
  if (out.matches.collectives.empty()) {
    out.note = "no collective matched across ranks: the ranks' paths are not joined";
  }
  return out;
}

}  // namespace vigil::trace
