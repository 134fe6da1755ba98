// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/multi_rank_critical_path.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "trace/analysis/end_timeline.h"
#include "trace/model/linker.h"

namespace vigil::trace {
namespace {

// One rank's dependency graph, as the single-rank critical path models it.
struct RankGraph {
  const RankTrace* t = nullptr;
  int64_t offset = 0;  // added to this rank's times to align them
  bool windowed = false;
  int64_t from = 0, to = 0;  // the step, in this rank's clock
  RankTimelines lines;
  EndTimeline all_gpu;
  std::vector<bool> visited;

  // Only the window's rows: the walk never leaves it, and all ranks' graphs are held at once.
  void Build() {
    const RankTrace& trace = *t;
    const EventTable& e = trace.events;
    lines = RankTimelines(e, [&](uint32_t i) { return InWindow(i); });
    std::vector<uint32_t> gpu;
    for (uint32_t i : trace.links.gpu) {
      if (InWindow(i)) gpu.push_back(i);
    }
    all_gpu = BuildEndTimeline(e, std::move(gpu));
    visited.assign(e.size(), false);
  }
  // CPU work that started in the step, and the GPU work it launched.
  bool InWindow(uint32_t row) const {
    if (!windowed) return true;
    uint32_t l = t->links.launcher.empty() ? kNoIndex : t->links.launcher[row];
    int64_t ts =
        IsGpuKind(t->events.kind[row]) && l != kNoIndex ? t->events.ts[l] : t->events.ts[row];
    return ts >= from && ts <= to;
  }
  uint32_t Before(uint32_t row, int64_t time) const {
    return InWindow(row) ? lines.Before(row, time) : kNoIndex;
  }
  int64_t Ts(uint32_t row) const { return t->events.ts[row] + offset; }
  int64_t End(uint32_t row) const { return t->events.end(row) + offset; }
};

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

PathCategory GpuCategory(const KernelClassifier& c, const RankTrace& t, uint32_t row) {
  return c.Classify(t.strings.Get(t.events.name[row]), t.events.kind[row]) == KernelClass::kComm
             ? PathCategory::kCommunication
             : PathCategory::kCompute;
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
  std::vector<RankGraph> g(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    g[r].t = ranks[r];
    g[r].offset = out.matches.offset_ns[r];
    for (const Step& s : ranks[r]->links.steps) {
      if (s.number == out.step && !g[r].windowed) {
        g[r].windowed = true;
        g[r].from = s.ts;
        g[r].to = s.ts + s.dur;
      }
    }
    g[r].Build();
  }
  std::unordered_map<uint64_t, uint32_t> collective_of;  // (rank index, row) -> collective
  for (uint32_t c = 0; c < out.matches.collectives.size(); ++c) {
    for (const CollectiveMember& m : out.matches.collectives[c].members) {
      collective_of[uint64_t{m.rank_index} << 32 | m.row] = c;
    }
  }
  // Start: the GPU event that ends last on any rank, else the CPU event that ends last.
  uint32_t ri = 0, cur = kNoIndex;
  int64_t best = INT64_MIN;
  for (bool gpu : {true, false}) {
    if (cur != kNoIndex) break;
    for (uint32_t r = 0; r < g.size(); ++r) {
      for (const EndTimeline& tl : g[r].lines.lines()) {
        if (tl.rows.empty() || IsGpuKind(ranks[r]->events.kind[tl.rows.front()]) != gpu) continue;
        uint32_t last = tl.rows.back();  // timelines hold the window's rows, sorted by end
        if (g[r].End(last) > best) {
          best = g[r].End(last);
          ri = r;
          cur = last;
        }
      }
    }
  }
  if (cur == kNoIndex) {
    out.note = "no events in the window";
    return out;
  }
  out.valid = true;
  out.end = best;
  int64_t frontier = out.end;  // [frontier, end] is attributed
  std::vector<int64_t> rank_ns(ranks.size(), 0);
  bool via_launch = false;  // the later node is a kernel and cur launched it
  auto add = [&](uint32_t r, uint32_t row, int64_t lo, int64_t hi, PathCategory c) {
    if (hi <= lo) return;
    out.by_category[static_cast<int>(c)] += hi - lo;
    rank_ns[r] += hi - lo;
    out.segments.push_back({r, row, lo, hi, c});
  };
  size_t nodes = 0;
  while (cur != kNoIndex && !g[ri].visited[cur] && nodes++ < max_nodes) {
    RankGraph& rg = g[ri];
    const RankTrace& t = *rg.t;
    const EventTable& e = t.events;
    rg.visited[cur] = true;
    int64_t top = std::min(frontier, rg.End(cur));
    if (frontier > top) {
      PathCategory gap = via_launch ? PathCategory::kLaunch : PathCategory::kIdle;
      out.by_category[static_cast<int>(gap)] += frontier - top;
      rank_ns[ri] += frontier - top;
    }
    via_launch = false;
    uint32_t next = kNoIndex;
    std::string_view name = t.strings.Get(e.name[cur]);
    if (IsGpuKind(e.kind[cur])) {
      PathCategory cat = GpuCategory(classifier, t, cur);
      auto co = collective_of.find(uint64_t{ri} << 32 | cur);
      if (co != collective_of.end()) {
        // The collective ends after the last arrival: cross to that rank when it was not us.
        const MatchedCollective& mc = out.matches.collectives[co->second];
        int64_t last = INT64_MIN, second = INT64_MIN;
        const CollectiveMember* last_m = nullptr;
        for (const CollectiveMember& m : mc.members) {
          int64_t a = g[m.rank_index].Ts(m.row);
          if (a > last) {
            second = last;
            last = a;
            last_m = &m;
          } else if (a > second) {
            second = a;
          }
        }
        int64_t mine = rg.Ts(cur);
        if (last_m != nullptr && last_m->rank_index != ri && last > mine &&
            !g[last_m->rank_index].visited[last_m->row] &&
            g[last_m->rank_index].InWindow(last_m->row)) {
          int64_t arrival = std::min(last, top);
          add(ri, cur, arrival, top, PathCategory::kCommunication);
          out.crossings.push_back(
              {co->second, ri, last_m->rank_index, last, last - mine, last - second});
          frontier = arrival;
          ri = last_m->rank_index;
          cur = last_m->row;
          g[ri].visited[cur] = true;
        } else {
          add(ri, cur, std::min(mine, top), top, cat);
          frontier = std::min(top, mine);
        }
      } else {
        add(ri, cur, std::min(rg.Ts(cur), top), top, cat);
        frontier = std::min(top, rg.Ts(cur));
      }
      // A kernel waits for its launch call (launch-bound) or the previous work on its stream.
      RankGraph& kg = g[ri];
      const EventTable& ke = kg.t->events;
      uint32_t launch = kg.t->links.launcher.empty() ? kNoIndex : kg.t->links.launcher[cur];
      uint32_t prev = kg.Before(cur, ke.ts[cur]);
      bool launch_bound =
          launch != kNoIndex && (prev == kNoIndex || ke.end(launch) >= ke.end(prev));
      next = launch_bound ? launch : prev;
      via_launch = launch_bound;
    } else if ((e.kind[cur] == EventKind::kRuntime || e.kind[cur] == EventKind::kDriver) &&
               IsSyncName(name)) {
      // Blocked on the GPU: the GPU work that finished last before the call returned.
      uint32_t gw = rg.all_gpu.Before(e.end(cur), kNoIndex);
      bool waited = gw != kNoIndex && e.end(gw) > e.ts[cur];
      int64_t released = waited ? std::min(rg.End(gw), top) : rg.Ts(cur);
      add(ri, cur, std::min(released, top), top, PathCategory::kSync);
      frontier = std::min(released, top);
      if (waited) {
        next = gw;
      } else {
        next = rg.Before(cur, e.ts[cur]);
      }
    } else {
      add(ri, cur, std::min(rg.Ts(cur), top), top, PathCategory::kLaunch);
      frontier = std::min(top, rg.Ts(cur));
      next = rg.Before(cur, e.ts[cur]);
    }
    if (next != kNoIndex && !g[ri].InWindow(next)) next = kNoIndex;
    cur = next;
  }
  out.start = frontier;
  std::reverse(out.segments.begin(), out.segments.end());
  std::reverse(out.crossings.begin(), out.crossings.end());
  int64_t len = out.Length();
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    out.ranks.push_back({r, ranks[r]->meta.rank, rank_ns[r],
                         len > 0 ? 100.0 * static_cast<double>(rank_ns[r]) / len : 0.0});
  }
  if (out.matches.collectives.empty()) {
    out.note = "no collective matched across ranks: the ranks' paths are not joined";
  }
  return out;
}

}  // namespace vigil::trace
