// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/what_if.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

namespace vigil::trace {
namespace {

bool ContainsIgnoreCase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return !needle.empty() && it != hay.end();
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ContainsIgnoreCase(a, b);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Merged busy intervals of one rank's GPU work (aligned ns).
std::vector<std::pair<int64_t, int64_t>> BusyIntervals(const PathGraph& g, uint32_t rank_index) {
  std::vector<std::pair<int64_t, int64_t>> v;
  for (uint32_t ev = 0; ev < g.events(); ++ev) {
    if (g.rank[ev] == rank_index && g.IsGpu(ev)) v.emplace_back(g.time[2 * ev], g.time[2 * ev + 1]);
  }
  std::sort(v.begin(), v.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& iv : v) {
    if (!merged.empty() && iv.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, iv.second);
    } else {
      merged.push_back(iv);
    }
  }
  return merged;
}

int64_t IdleOverlap(const std::vector<std::pair<int64_t, int64_t>>& busy, int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  int64_t covered = 0;
  auto it = std::lower_bound(busy.begin(), busy.end(), std::make_pair(lo, INT64_MIN));
  if (it != busy.begin()) --it;
  for (; it != busy.end() && it->first < hi; ++it) {
    covered += std::max<int64_t>(0, std::min(hi, it->second) - std::max(lo, it->first));
  }
  return (hi - lo) - covered;
}

// The measured path as (node, in-edge taken) pairs, sink first.
std::vector<std::pair<uint32_t, uint32_t>> MeasuredSteps(const PathGraph& g,
                                                         const std::vector<int64_t>& weight) {
  std::vector<std::pair<uint32_t, uint32_t>> steps;
  WalkCriticalPath(g, g.time, weight, g.slack, &steps);
  return steps;
}

// Applies new duration weights, and sums what they remove from the measured path's edges.
WhatIfResult ProjectDurations(const PathGraph& g, const CriticalPath& measured, std::string name,
                              const std::function<int64_t(uint32_t event, int64_t w)>& new_w) {
  std::vector<int64_t> w = MeasuredWeights(g);
  const std::vector<int64_t> before = w;
  for (uint32_t v = 0; v < g.nodes(); ++v) {
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      const PathEdge& e = g.in[k];
      if (v % 2 == 1 &&
          (e.kind == PathEdgeKind::kDuration || e.kind == PathEdgeKind::kCollective)) {
        w[k] = std::clamp<int64_t>(new_w(v / 2, w[k]), 0, w[k]);
      }
    }
  }
  int64_t removable = 0;
  for (const auto& [node, k] : MeasuredSteps(g, before)) {
    if (k != kNoIndex) removable += before[k] - w[k];
  }
  WhatIfResult r = ProjectWeights(g, measured, std::move(name), w, g.slack);
  r.removable_ns = removable;
  return r;
}

}  // namespace

std::string WhatIfSpec::Label() const { return fmt::format("{}={:g}x", name, factor); }

StatusOr<std::vector<WhatIfSpec>> ParseWhatIfSpecs(std::string_view text) {
  std::vector<WhatIfSpec> out;
  while (!Trim(text).empty()) {
    const size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    std::string_view name = eq == std::string_view::npos ? "" : Trim(item.substr(0, eq));
    std::string_view f = eq == std::string_view::npos ? "" : Trim(item.substr(eq + 1));
    if (!f.empty() && (f.back() == 'x' || f.back() == 'X')) f.remove_suffix(1);
    std::string num(f);
    char* end = nullptr;
    const double factor = num.empty() ? 0 : std::strtod(num.c_str(), &end);
    if (name.empty() || num.empty() || end != num.c_str() + num.size() || !std::isfinite(factor) ||
        factor <= 0) {
      return InvalidArgumentError("bad --what-if item '" + std::string(item) +
                                  "': expected NAME=FACTORx, e.g. attention=2x");
    }
    out.push_back({std::string(name), factor});
  }
  if (out.empty()) return InvalidArgumentError("empty --what-if: expected NAME=FACTORx");
  return out;
}

WhatIfResult ProjectWeights(const PathGraph& g, const CriticalPath& measured, std::string name,
                            const std::vector<int64_t>& weight, const std::vector<int64_t>& slack) {
  WhatIfResult r;
  r.name = std::move(name);
  r.measured_ns = measured.Length();
  if (g.nodes() == 0) {
    r.note = "no events";
    return r;
  }
  const std::vector<int64_t> t = ReplayPathGraph(g, weight, slack);
  r.path = WalkCriticalPath(g, t, weight, slack);
  r.valid = true;
  r.projected_ns = std::max<int64_t>(0, r.path.end - measured.start);
  const std::set<uint32_t> before(measured.events.begin(), measured.events.end());
  for (uint32_t ev : r.path.events) {
    if (!before.count(ev)) r.moved.emplace_back(g.rank[ev], g.row[ev]);
  }
  return r;
}

int64_t GpuIdleIn(const PathGraph& g, uint32_t rank_index, int64_t from, int64_t to) {
  return IdleOverlap(BusyIntervals(g, rank_index), from, to);
}

WhatIfResult ProjectGpuIdleRemoved(const PathGraph& g, const CriticalPath& measured) {
  std::vector<int64_t> w = MeasuredWeights(g);
  std::vector<int64_t> slack = g.slack;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(g.traces.size());
  for (uint32_t r = 0; r < g.traces.size(); ++r) busy[r] = BusyIntervals(g, r);
  int64_t removed = 0;
  for (const auto& [v, k] : MeasuredSteps(g, w)) {
    if (k == kNoIndex) continue;
    const auto& b = busy[g.rank[v / 2]];
    const int64_t from = g.time[g.in[k].from];
    const int64_t cut_w = IdleOverlap(b, from, from + w[k]);
    const int64_t cut_s = IdleOverlap(b, from + w[k], g.time[v]);
    w[k] -= cut_w;
    slack[v] -= std::min(slack[v], cut_s);
    removed += cut_w + cut_s;
  }
  WhatIfResult r = ProjectWeights(g, measured, "gpu_idle_removed", w, slack);
  r.removable_ns = removed;
  return r;
}

WhatIfResult ProjectCommOverlapped(const PathGraph& g, const CriticalPath& measured) {
  return ProjectDurations(g, measured, "comm_overlapped", [&](uint32_t ev, int64_t w) {
    return static_cast<KernelClass>(g.gpu_class[ev]) == KernelClass::kComm ? 0 : w;
  });
}

WhatIfResult ProjectRoofline(const PathGraph& g, const CriticalPath& measured,
                             const std::vector<int64_t>& roofline_ns) {
  return ProjectDurations(g, measured, "roofline", [&](uint32_t ev, int64_t w) {
    const uint32_t row = g.row[ev];
    if (g.rank[ev] != 0 || row >= roofline_ns.size() || roofline_ns[row] < 0) return w;
    return std::min(w, roofline_ns[row]);
  });
}

WhatIfResult ProjectFaster(const PathGraph& g, const CriticalPath& measured, std::string name,
                           const std::function<bool(uint32_t, uint32_t)>& match, double factor) {
  return ProjectDurations(g, measured, std::move(name), [&](uint32_t ev, int64_t w) {
    if (factor <= 0 || !match(g.rank[ev], g.row[ev])) return w;
    return static_cast<int64_t>(std::llround(static_cast<double>(w) / factor));
  });
}

WhatIfResult ProjectSpec(const PathGraph& g, const CriticalPath& measured, const WhatIfSpec& spec,
                         const KernelCategoryFn& category) {
  auto match = [&](uint32_t rank_index, uint32_t row) {
    const RankTrace& t = *g.traces[rank_index];
    if (category) return EqualsIgnoreCase(category(t, row), spec.name);
    return ContainsIgnoreCase(t.strings.Get(t.events.name[row]), spec.name);
  };
  WhatIfResult r = ProjectFaster(g, measured, spec.Label(), match, spec.factor);
  if (r.valid && r.removable_ns == 0 && r.GainNs() == 0) {
    r.note = "no GPU work on the critical path matches '" + spec.name + "'";
  }
  return r;
}

int64_t ReplayedDeviceLength(const PathGraph& g, const std::vector<int64_t>* kernel_ns) {
  std::vector<int64_t> t(g.nodes(), 0);
  int64_t end = 0;
  for (uint32_t v : g.order) {
    const uint32_t ev = v / 2;
    if (!g.IsGpu(ev)) continue;
    int64_t best = 0;
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      const PathEdge& e = g.in[k];
      if (!g.IsGpu(e.from / 2)) continue;
      int64_t w =
          e.kind == PathEdgeKind::kDuration || e.kind == PathEdgeKind::kCollective ? e.weight : 0;
      const uint32_t row = g.row[ev];
      if (e.kind == PathEdgeKind::kDuration && kernel_ns != nullptr && g.rank[ev] == 0 &&
          row < kernel_ns->size() && (*kernel_ns)[row] >= 0) {
        w = (*kernel_ns)[row];
      }
      best = std::max(best, t[e.from] + w);
    }
    t[v] = best;
    end = std::max(end, best);
  }
  return end;
}

int64_t ReplayedDeviceLength(const RankTrace& trace, const KernelClassifier& classifier) {
  return ReplayedDeviceLength(BuildPathGraph(trace, classifier));
}

const WhatIfResult* WhatIfReport::Find(std::string_view name) const {
  for (const WhatIfResult& r : projections) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

WhatIfReport ComputeWhatIfs(const PathGraph& g, const CriticalPath& measured,
                            const std::vector<WhatIfSpec>& specs,
                            const KernelCategoryFn& category) {
  WhatIfReport out;
  if (g.nodes() == 0) return out;
  out.projections.push_back(ProjectGpuIdleRemoved(g, measured));
  out.projections.push_back(ProjectCommOverlapped(g, measured));
  // Pinned host memory copies at about twice the pageable rate.
  WhatIfResult pinned = ProjectFaster(
      g, measured, "pageable_copies_pinned",
      [&](uint32_t rank_index, uint32_t row) {
        const RankTrace& t = *g.traces[rank_index];
        return t.events.kind[row] == EventKind::kMemcpy &&
               ContainsIgnoreCase(t.strings.Get(t.events.name[row]), "pageable");
      },
      2.0);
  out.projections.push_back(std::move(pinned));
  for (const WhatIfSpec& s : specs)
    out.projections.push_back(ProjectSpec(g, measured, s, category));
  out.replayed_device_ns = ReplayedDeviceLength(g);
  return out;
}

}  // namespace vigil::trace
