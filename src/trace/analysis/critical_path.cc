// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/critical_path.h"

#include <algorithm>

namespace vigil::trace {

std::string CriticalPath::BoundBy() const {
  std::pair<int64_t, const char*> parts[] = {{gpu_compute, "gpu_compute"},
                                             {gpu_comm, "gpu_comm"},
                                             {gpu_memory, "gpu_memory"},
                                             {cpu, "cpu"},
                                             {sync, "sync"},
                                             {gaps, "gaps"}};
  auto best = std::max_element(std::begin(parts), std::end(parts),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
  return best->first > 0 ? best->second : "none";
}

int64_t CriticalPath::Part(PathPart p) const {
  switch (p) {
    case PathPart::kGpuCompute:
      return gpu_compute;
    case PathPart::kGpuComm:
      return gpu_comm;
    case PathPart::kGpuMemory:
      return gpu_memory;
    case PathPart::kCpu:
      return cpu;
    case PathPart::kSync:
      return sync;
    case PathPart::kGap:
      return gaps;
  }
  return 0;
}

std::vector<int64_t> MeasuredWeights(const PathGraph& g) {
  std::vector<int64_t> w(g.in.size());
  for (size_t k = 0; k < g.in.size(); ++k) w[k] = g.in[k].weight;
  return w;
}

std::vector<int64_t> ReplayPathGraph(const PathGraph& g, const std::vector<int64_t>& weight,
                                     const std::vector<int64_t>& slack) {
  std::vector<int64_t> t(g.nodes());
  for (uint32_t v : g.order) {
    int64_t best = INT64_MIN;
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      best = std::max(best, t[g.in[k].from] + weight[k]);
    }
    t[v] = best == INT64_MIN ? g.time[v] : best + slack[v];
  }
  return t;
}

CriticalPath WalkCriticalPath(const PathGraph& g, const std::vector<int64_t>& time,
                              const std::vector<int64_t>& weight, const std::vector<int64_t>& slack,
                              std::vector<std::pair<uint32_t, uint32_t>>* edges_out) {
  CriticalPath out;
  out.sync_edges = g.sync_edges;
  out.event_wait_edges = g.event_wait_edges;
  if (g.nodes() == 0) return out;
  // The sink: the latest node, the first in topological order among equals.
  uint32_t v = g.order.front();
  for (uint32_t u : g.order) {
    if (time[u] > time[v]) v = u;
  }
  out.end = time[v];
  int64_t parts[kPathParts] = {};
  auto add_event = [&](uint32_t node) {
    if (out.events.empty() || out.events.back() != node / 2) out.events.push_back(node / 2);
  };
  for (;;) {
    add_event(v);
    uint32_t best = kNoIndex;
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      if (best == kNoIndex ||
          time[g.in[k].from] + weight[k] > time[g.in[best].from] + weight[best]) {
        best = k;
      }
    }
    if (edges_out != nullptr) edges_out->emplace_back(v, best);
    if (best == kNoIndex) break;
    parts[static_cast<int>(g.in[best].part)] += weight[best];
    parts[static_cast<int>(PathPart::kGap)] += slack[v];
    v = g.in[best].from;
  }
  out.start = time[v];
  std::reverse(out.events.begin(), out.events.end());
  for (uint32_t ev : out.events) {
    if (g.rank[ev] == 0) out.rows.push_back(g.row[ev]);
  }
  out.gpu_compute = parts[static_cast<int>(PathPart::kGpuCompute)];
  out.gpu_comm = parts[static_cast<int>(PathPart::kGpuComm)];
  out.gpu_memory = parts[static_cast<int>(PathPart::kGpuMemory)];
  out.cpu = parts[static_cast<int>(PathPart::kCpu)];
  out.sync = parts[static_cast<int>(PathPart::kSync)];
  out.gaps = parts[static_cast<int>(PathPart::kGap)];
  return out;
}

CriticalPath CriticalPathOf(const PathGraph& g) {
  const std::vector<int64_t> w = MeasuredWeights(g);
  return WalkCriticalPath(g, g.time, w, g.slack);
}

CriticalPath ComputeCriticalPath(const RankTrace& trace, const KernelClassifier& classifier) {
  return CriticalPathOf(BuildPathGraph(trace, classifier));
}

}  // namespace vigil::trace
