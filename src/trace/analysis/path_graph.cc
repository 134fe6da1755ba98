// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/path_graph.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "trace/analysis/path_graph_builder.h"

namespace vigil::trace {

std::string_view PathPartName(PathPart p) {
  switch (p) {
    case PathPart::kGpuCompute:
      return "gpu_compute";
    case PathPart::kGpuComm:
      return "gpu_comm";
    case PathPart::kGpuMemory:
      return "gpu_memory";
    case PathPart::kCpu:
      return "cpu";
    case PathPart::kSync:
      return "sync";
    case PathPart::kGap:
      return "gaps";
  }
  return "gaps";
}

namespace path_internal {
namespace {

bool OnThread(EventKind k) {
  return k == EventKind::kCpuOp || k == EventKind::kRuntime || k == EventKind::kDriver;
}

// CPU work that started in the window, and the GPU work it launched.
bool InWindow(const RankTrace& t, const PathWindow& w, uint32_t row) {
  if (!w.windowed) return true;
  const uint32_t l = t.links.launcher.empty() ? kNoIndex : t.links.launcher[row];
  const int64_t ts =
      IsGpuKind(t.events.kind[row]) && l != kNoIndex ? t.events.ts[l] : t.events.ts[row];
  return ts >= w.from && ts <= w.to;
}

}  // namespace

class Builder {
 public:
  Builder(PathGraph* g, const KernelClassifier& c) : g_(g), classifier_(c) {}

  void AddRank(const RankTrace& t, int64_t offset, const PathWindow& w) {
    const EventTable& e = t.events;
    RankBuild rb;
    rb.t = &t;
    rb.rank = static_cast<uint32_t>(g_->traces.size());
    rb.offset = offset;
    rb.first = static_cast<uint32_t>(g_->row.size());
    g_->traces.push_back(&t);
    g_->offset_ns.push_back(offset);
    g_->index_of.emplace_back(e.size(), kNoIndex);
    RowClassifier cls(classifier_, t);
    for (uint32_t i = 0; i < e.size(); ++i) {
      const EventKind k = e.kind[i];
      const bool gpu = IsGpuKind(k);
      if ((!gpu && !OnThread(k)) || !InWindow(t, w, i)) continue;
      const auto ev = static_cast<uint32_t>(g_->row.size());
      g_->rank.push_back(rb.rank);
      g_->row.push_back(i);
      g_->gpu_class.push_back(static_cast<uint8_t>(gpu ? cls(i) : KernelClass::kOther));
      g_->time.push_back(e.ts[i] + offset);
      g_->time.push_back(e.end(i) + offset);
      g_->index_of.back()[i] = ev;
      (gpu ? rb.gpu_events : rb.thread_events).push_back(ev);
      duration_edge_.push_back(kNoIndex);
      prev_on_stream_.push_back(kNoIndex);
    }
    for (uint32_t ev : rb.gpu_events) {
      const uint32_t r = g_->row[ev];
      const uint32_t l = t.links.launcher.empty() ? kNoIndex : t.links.launcher[r];
      // Work without its launch call in the trace was launched before the trace began.
      rb.streams.Add({e.device[r], e.stream[r]}, l != kNoIndex ? e.ts[l] : t.links.first_ts, ev);
    }
    rb.streams.Finish(g_->time);
    const size_t n = g_->row.size() - rb.first;
    rb.wait_until.assign(n, INT64_MIN);
    rb.is_sync.assign(n, 0);
    rb.wait_sources.assign(n, kNoIndex);
    AddStreams(rb);
    AddSyncEdges(*g_, &rb, &edges_, &g_->sync_edges, &g_->event_wait_edges);
    AddThreads(rb);
    AddLaunches(rb);
  }

  // The collective ends on every member only after the last member arrived.
  void AddCollective(const JoinedCollective& c) {
    std::vector<uint32_t> evs;
    for (const auto& [ri, r] : c.members) {
      const uint32_t ev = ri < g_->index_of.size() ? g_->EventOf(ri, r) : kNoIndex;
      if (ev != kNoIndex && IsGpuKind(g_->traces[ri]->events.kind[r])) evs.push_back(ev);
    }
    if (evs.size() < 2) return;
    int64_t last = INT64_MIN;
    for (uint32_t ev : evs) last = std::max(last, g_->time[StartNode(ev)]);
    for (uint32_t ev : evs) {
      const int64_t w = std::max<int64_t>(0, g_->time[EndNode(ev)] - last);
      if (duration_edge_[ev] != kNoIndex) edges_[duration_edge_[ev]].edge.weight = w;
      for (uint32_t other : evs) {
        if (other == ev) continue;
        edges_.push_back(
            {EndNode(ev), {StartNode(other), w, PathEdgeKind::kCollective, PathPart::kGpuComm}});
        ++g_->collective_edges;
      }
    }
  }

  void Finish();

 private:
  void AddStreams(RankBuild& rb);
  void AddThreads(RankBuild& rb);
  void AddLaunches(RankBuild& rb);

  PathGraph* g_;
  const KernelClassifier& classifier_;
  std::vector<RawEdge> edges_;
  std::vector<uint32_t> duration_edge_;   // per event: index into edges_ (GPU work)
  std::vector<uint32_t> prev_on_stream_;  // per event: the work before it on its stream
};

void Builder::AddStreams(RankBuild& rb) {
  const EventTable& e = rb.t->events;
  std::map<std::pair<int32_t, int64_t>, std::vector<uint32_t>> streams;
  for (uint32_t ev : rb.gpu_events)
    streams[{e.device[g_->row[ev]], e.stream[g_->row[ev]]}].push_back(ev);
  for (auto& [key, evs] : streams) {
    std::sort(evs.begin(), evs.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(g_->time[StartNode(a)], a) < std::make_pair(g_->time[StartNode(b)], b);
    });
    uint32_t prev = kNoIndex;  // the earlier work that ends last
    for (uint32_t ev : evs) {
      duration_edge_[ev] = static_cast<uint32_t>(edges_.size());
      edges_.push_back({EndNode(ev),
                        {StartNode(ev), g_->time[EndNode(ev)] - g_->time[StartNode(ev)],
                         PathEdgeKind::kDuration, GpuPart(g_->gpu_class[ev])}});
      if (prev != kNoIndex) {
        edges_.push_back(
            {StartNode(ev), {EndNode(prev), 0, PathEdgeKind::kStream, PathPart::kGap}});
        prev_on_stream_[ev] = prev;
      }
      if (prev == kNoIndex || g_->time[EndNode(ev)] >= g_->time[EndNode(prev)]) prev = ev;
    }
  }
}

void Builder::AddThreads(RankBuild& rb) {
  const EventTable& e = rb.t->events;
  struct Point {
    int64_t t;
    int cls;      // 0: end of a non-empty event, 1: start, 2: end of an empty event
    int64_t tie;  // starts: longer first; ends: shorter first
    uint32_t node;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Point>> threads;
  for (uint32_t ev : rb.thread_events) {
    const uint32_t r = g_->row[ev];
    const int64_t s = g_->time[StartNode(ev)], d = g_->time[EndNode(ev)] - s;
    auto& pts = threads[{e.pid[r], e.tid[r]}];
    pts.push_back({s, 1, -d, StartNode(ev)});
    pts.push_back({s + d, d > 0 ? 0 : 2, d, EndNode(ev)});
  }
  for (auto& [key, pts] : threads) {
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
      return std::tie(a.t, a.cls, a.tie, a.node) < std::tie(b.t, b.cls, b.tie, b.node);
    });
    std::vector<uint32_t> open;  // events, outermost first
    for (size_t i = 0; i + 1 < pts.size(); ++i) {
      const uint32_t ev = pts[i].node / 2;
      if (pts[i].node % 2 == 0) {
        open.push_back(ev);
      } else {
        auto it = std::find(open.rbegin(), open.rend(), ev);
        if (it != open.rend()) open.erase(std::next(it).base());
      }
      // The interval up to the next boundary: CPU time, except where an enclosing blocking call
      // waited for the GPU (that wait is the sync edge's, not the thread's).
      const int64_t lo = pts[i].t, hi = pts[i + 1].t;
      int64_t w = hi - lo;
      PathPart part = PathPart::kCpu;
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        const uint32_t k = *it - rb.first;
        if (!rb.is_sync[k]) continue;
        part = PathPart::kSync;
        if (rb.wait_until[k] != INT64_MIN) {
          const int64_t from = std::max(lo, g_->time[StartNode(*it)]);
          w -= std::max<int64_t>(0, std::min(hi, rb.wait_until[k]) - from);
        }
        break;
      }
      edges_.push_back(
          {pts[i + 1].node, {pts[i].node, std::max<int64_t>(0, w), PathEdgeKind::kThread, part}});
    }
  }
}

void Builder::AddLaunches(RankBuild& rb) {
  const RankTrace& t = *rb.t;
  if (t.links.launcher.empty()) return;
  struct Launch {
    uint32_t ev, call;
    int64_t latency;
  };
  std::vector<Launch> launches;
  std::vector<int64_t> idle_latencies;  // launches onto a stream that was already free
  for (uint32_t ev : rb.gpu_events) {
    const uint32_t l = t.links.launcher[g_->row[ev]];
    const uint32_t call = l == kNoIndex ? kNoIndex : g_->EventOf(rb.rank, l);
    if (call == kNoIndex) continue;
    const int64_t ls = g_->time[StartNode(call)];
    const int64_t latency = g_->time[StartNode(ev)] - ls;
    if (latency < 0) {
      ++g_->dropped_edges;
      continue;
    }
    launches.push_back({ev, call, latency});
    const uint32_t p = prev_on_stream_[ev];
    if (p == kNoIndex || g_->time[EndNode(p)] <= ls) idle_latencies.push_back(latency);
  }
  // The launch latency of work that waited for its stream is not measured: the trace's typical
  // latency onto a free stream (its 10th percentile) stands in, capped by what was observed.
  std::vector<int64_t>& v = idle_latencies;
  if (v.empty()) {
    for (const Launch& l : launches) v.push_back(l.latency);
  }
  int64_t floor = 0;
  if (!v.empty()) {
    auto nth = v.begin() + static_cast<ptrdiff_t>(v.size() / 10);
    std::nth_element(v.begin(), nth, v.end());
    floor = *nth;
  }
  std::vector<uint32_t> by_end;  // for inferred waits: the rank's GPU work by end time
  if (rb.infer_waits) {
    by_end = rb.gpu_events;
    std::sort(by_end.begin(), by_end.end(),
              [&](uint32_t a, uint32_t b) { return g_->time[EndNode(a)] < g_->time[EndNode(b)]; });
  }
  const EventTable& e = t.events;
  for (const Launch& l : launches) {
    const int64_t ls = g_->time[StartNode(l.call)];
    int64_t ready = INT64_MIN;  // when the stream and any event it waited on let it start
    const uint32_t p = prev_on_stream_[l.ev];
    if (p != kNoIndex) ready = g_->time[EndNode(p)];
    uint32_t src = rb.wait_sources[l.ev - rb.first];
    const int64_t start = g_->time[StartNode(l.ev)];
    if (src == kNoIndex && rb.infer_waits && start - std::max(ready, ls + floor) > floor) {
      // Unexplained delay: the latest work on another stream of the device that ended before.
      auto it = std::upper_bound(by_end.begin(), by_end.end(), start,
                                 [&](int64_t at, uint32_t x) { return at < g_->time[EndNode(x)]; });
      const uint32_t r = g_->row[l.ev];
      for (int scan = 0; it != by_end.begin() && scan < 64; ++scan) {
        const uint32_t c = *--it;
        const uint32_t cr = g_->row[c];
        if (e.stream[cr] == e.stream[r] || e.device[cr] != e.device[r]) continue;
        if (g_->time[EndNode(c)] > std::max(ready, ls + floor)) {
          src = c;
          edges_.push_back(
              {StartNode(l.ev), {EndNode(c), 0, PathEdgeKind::kEventWait, PathPart::kGap}});
          ++g_->event_wait_edges;
        }
        break;
      }
    }
    if (src != kNoIndex) ready = std::max(ready, g_->time[EndNode(src)]);
    const int64_t w = ready <= ls + floor ? l.latency : std::min(l.latency, floor);
    edges_.push_back(
        {StartNode(l.ev), {StartNode(l.call), w, PathEdgeKind::kLaunch, PathPart::kGap}});
  }
}

void Builder::Finish() {
  PathGraph& g = *g_;
  const size_t n = g.nodes();
  // Every event's own start -> end for CPU rows is carried by the thread order.
  std::vector<RawEdge> kept;
  kept.reserve(edges_.size());
  for (RawEdge& r : edges_) {
    const int64_t span = g.time[r.to] - g.time[r.edge.from];
    if (span < 0) {
      ++g.dropped_edges;
      continue;
    }
    r.edge.weight = std::clamp<int64_t>(r.edge.weight, 0, span);
    kept.push_back(r);
  }
  edges_ = {};
  // Topological order: by measured time (every kept edge goes forward or stays level), nodes at
  // the same time after their predecessors; a cycle at one instant is broken in node order.
  std::vector<uint32_t> out_begin(n + 1, 0), out;
  std::vector<uint32_t> indeg(n, 0);
  for (const RawEdge& r : kept) {
    ++out_begin[r.edge.from + 1];
    ++indeg[r.to];
  }
  for (size_t v = 0; v < n; ++v) out_begin[v + 1] += out_begin[v];
  out.resize(kept.size());
  {
    std::vector<uint32_t> fill(out_begin.begin(), out_begin.end() - 1);
    for (const RawEdge& r : kept) out[fill[r.edge.from]++] = r.to;
  }
  std::vector<uint32_t> by_time(n);
  for (uint32_t v = 0; v < n; ++v) by_time[v] = v;
  std::sort(by_time.begin(), by_time.end(), [&](uint32_t a, uint32_t b) {
    return g.time[a] != g.time[b] ? g.time[a] < g.time[b] : a < b;
  });
  using Item = std::pair<int64_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (uint32_t v = 0; v < n; ++v) {
    if (indeg[v] == 0) ready.push({g.time[v], v});
  }
  std::vector<uint32_t> pos(n, kNoIndex);
  g.order.clear();
  g.order.reserve(n);
  size_t scan = 0;
  while (g.order.size() < n) {
    uint32_t v;
    if (!ready.empty()) {
      v = ready.top().second;
      ready.pop();
      if (pos[v] != kNoIndex) continue;
    } else {
      while (pos[by_time[scan]] != kNoIndex) ++scan;
      v = by_time[scan];
    }
    pos[v] = static_cast<uint32_t>(g.order.size());
    g.order.push_back(v);
    for (uint32_t k = out_begin[v]; k < out_begin[v + 1]; ++k) {
      if (--indeg[out[k]] == 0 && pos[out[k]] == kNoIndex) ready.push({g.time[out[k]], out[k]});
    }
  }
  g.in_begin.assign(n + 1, 0);
  size_t dropped = 0;
  for (const RawEdge& r : kept) {
    if (pos[r.edge.from] < pos[r.to]) {
      ++g.in_begin[r.to + 1];
    } else {
      ++dropped;
    }
  }
  g.dropped_edges += dropped;
  for (size_t v = 0; v < n; ++v) g.in_begin[v + 1] += g.in_begin[v];
  g.in.resize(g.in_begin[n]);
  std::vector<uint32_t> fill(g.in_begin.begin(), g.in_begin.end() - 1);
  for (const RawEdge& r : kept) {
    if (pos[r.edge.from] < pos[r.to]) g.in[fill[r.to]++] = r.edge;
  }
  g.slack.assign(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    int64_t best = INT64_MIN;
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      best = std::max(best, g.time[g.in[k].from] + g.in[k].weight);
    }
    if (best != INT64_MIN) g.slack[v] = std::max<int64_t>(0, g.time[v] - best);
  }
}

}  // namespace path_internal

PathGraph BuildPathGraph(const RankTrace& trace, const KernelClassifier& classifier,
                         const PathWindow& window) {
  PathGraph g;
  path_internal::Builder b(&g, classifier);
  b.AddRank(trace, 0, window);
  b.Finish();
  return g;
}

PathGraph BuildJoinedPathGraph(const std::vector<const RankTrace*>& ranks,
                               const std::vector<int64_t>& offset_ns,
                               const std::vector<PathWindow>& windows,
                               const std::vector<JoinedCollective>& collectives,
                               const KernelClassifier& classifier) {
  PathGraph g;
  path_internal::Builder b(&g, classifier);
  for (size_t r = 0; r < ranks.size(); ++r) {
    b.AddRank(*ranks[r], r < offset_ns.size() ? offset_ns[r] : 0,
              r < windows.size() ? windows[r] : PathWindow{});
  }
  for (const JoinedCollective& c : collectives) b.AddCollective(c);
  b.Finish();
  return g;
}

}  // namespace vigil::trace
