// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/critical_path.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace/analysis/end_timeline.h"
#include "trace/model/linker.h"

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

CriticalPath ComputeCriticalPath(const RankTrace& t, const KernelClassifier& classifier,
                                 size_t max_nodes) {
  const EventTable& e = t.events;
  const Links& l = t.links;
  CriticalPath out;
  // Threads that launch GPU work, and the streams.
  const RankTimelines lines(e, [](uint32_t) { return true; });
  auto before = [&](uint32_t row, int64_t ts) { return lines.Before(row, ts); };
  EndTimeline all_gpu = BuildEndTimeline(e, l.gpu);
  // Start: the GPU event that ends last, else the CPU event that ends last.
  uint32_t cur = all_gpu.rows.empty() ? kNoIndex : all_gpu.rows.back();
  if (cur == kNoIndex) {
    for (const EndTimeline& tl : lines.lines()) {
      if (!tl.rows.empty() && (cur == kNoIndex || tl.end(tl.rows.size() - 1) > e.end(cur)))
        cur = tl.rows.back();
    }
  }
  if (cur == kNoIndex) return out;
  out.end = e.end(cur);
  int64_t frontier = out.end;  // [frontier, end] is attributed
  std::vector<bool> visited(e.size(), false);
  while (cur != kNoIndex && !visited[cur] && out.rows.size() < max_nodes) {
    visited[cur] = true;
    out.rows.push_back(cur);
    int64_t top = std::min(frontier, e.end(cur));
    out.gaps += frontier - top;
    std::string_view name = t.strings.Get(e.name[cur]);
    uint32_t next = kNoIndex;
    if (IsGpuKind(e.kind[cur])) {
      int64_t seg = std::max<int64_t>(0, top - e.ts[cur]);
      switch (classifier.Classify(name, e.kind[cur])) {
        case KernelClass::kComm:
          out.gpu_comm += seg;
          break;
        case KernelClass::kMemory:
          out.gpu_memory += seg;
          break;
        default:
          out.gpu_compute += seg;
          break;
      }
      frontier = std::min(top, e.ts[cur]);
      uint32_t launch = l.launcher[cur];
      uint32_t prev = before(cur, e.ts[cur]);
      // CPU-bound when the launch call ended after the stream became free.
      next =
          launch != kNoIndex && (prev == kNoIndex || e.end(launch) >= e.end(prev)) ? launch : prev;
    } else if ((e.kind[cur] == EventKind::kRuntime || e.kind[cur] == EventKind::kDriver) &&
               IsSyncName(name)) {
      // Blocked on the GPU: the GPU work that finished last before the call returned.
      uint32_t g = all_gpu.Before(e.end(cur), kNoIndex);
      int64_t released =
          g != kNoIndex && e.end(g) > e.ts[cur] ? std::min(e.end(g), top) : e.ts[cur];
      out.sync += std::max<int64_t>(0, top - released);
      frontier = released;
      if (g != kNoIndex && e.end(g) > e.ts[cur]) {
        next = g;
      } else {
        out.sync += std::max<int64_t>(0, released - e.ts[cur]);
        frontier = std::min(frontier, e.ts[cur]);
        next = before(cur, e.ts[cur]);
      }
    } else {
      out.cpu += std::max<int64_t>(0, top - e.ts[cur]);
      frontier = std::min(top, e.ts[cur]);
      next = before(cur, e.ts[cur]);
    }
    cur = next;
  }
  out.start = frontier;
  std::reverse(out.rows.begin(), out.rows.end());
  return out;
}

}  // namespace vigil::trace
