// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/launch_stats.h"

#include <algorithm>
#include <cstddef>
#include <unordered_map>
#include <unordered_set>

#include "trace/model/linker.h"

namespace vigil::trace {
namespace {

struct Pair {
  double cpu, gpu, delay;
  uint32_t launch_row, gpu_row;
};

double Median(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void Summarise(const std::vector<Pair>& pairs, double runtime_cutoff, double delay_cutoff,
               LaunchStats* s) {
  std::vector<double> delays;
  delays.reserve(pairs.size());
  for (const Pair& p : pairs) {
    ++s->n;
    if (p.cpu <= runtime_cutoff && p.gpu < p.cpu) ++s->short_kernels;
    if (p.cpu > runtime_cutoff) ++s->runtime_outliers;
    if (p.delay > delay_cutoff) ++s->delay_outliers;
    s->cpu_sum += p.cpu;
    s->gpu_sum += p.gpu;
    delays.push_back(p.delay);
  }
  if (!delays.empty()) {
    s->has_delay = true;
    double sum = 0;
    for (double d : delays) sum += d;
    s->delay_mean = sum / static_cast<double>(delays.size());
    s->delay_p50 = Median(delays, 0.5);
    s->delay_p95 = Median(delays, 0.95);
  }
  std::vector<size_t> order(pairs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  size_t keep = std::min<size_t>(10, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(keep), order.end(),
                    [&](size_t a, size_t b) { return pairs[a].delay > pairs[b].delay; });
  for (size_t k = 0; k < keep; ++k) {
    const Pair& p = pairs[order[k]];
    s->worst_delays.push_back({p.launch_row, p.gpu_row, static_cast<int64_t>(p.delay)});
  }
}

}  // namespace

LaunchStats ComputeLaunchStats(const RankTrace& t, const AnalysisConfig& config) {
  const EventTable& e = t.events;
  LaunchStats s;
  s.unit_ns = 1;
  std::vector<Pair> pairs;
  std::unordered_set<uint32_t> graph_seen;
  for (uint32_t i : t.links.gpu) {
    uint32_t l = t.links.launcher[i];
    if (l == kNoIndex) continue;
    std::string_view api = t.strings.Get(e.name[l]);
    if (!IsLaunchName(api)) continue;
    ++s.by_api[std::string(api)];
    bool graph = IsGraphLaunchName(api);
    if (graph) {
      ++s.graph_kernels;
      // A graph's kernels share one launch: only the first one measures the launch.
      if (!graph_seen.insert(l).second) continue;
      ++s.graph_launches;
    }
    double cpu = static_cast<double>(e.dur[l]);
    double gpu = static_cast<double>(e.dur[i]);
    double delay = static_cast<double>(e.ts[i] - e.end(l));
    pairs.push_back({cpu, gpu, delay, l, i});
  }
  Summarise(pairs, static_cast<double>(config.runtime_cutoff_ns),
            static_cast<double>(config.launch_delay_cutoff_ns), &s);
  return s;
}

LaunchStats ComputeLaunchStatsHta(const RankTrace& t, const HtaRows& rows,
                                  const AnalysisConfig& config) {
  const EventTable& e = t.events;
  LaunchStats s;
  s.unit_ns = 1000;
  std::unordered_set<int64_t> corr;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    std::string_view n = t.strings.Get(e.name[rows.row[k]]);
    if (n == "cudaLaunchKernel" || n == "cudaLaunchKernelExC" || n == "cudaMemcpyAsync" ||
        n == "cudaMemsetAsync") {
      corr.insert(e.correlation[rows.row[k]]);
    }
  }
  std::unordered_map<int64_t, std::vector<size_t>> cpu;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] == -1 && corr.count(e.correlation[i]) != 0) cpu[e.correlation[i]].push_back(k);
  }
  std::vector<Pair> pairs;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] == -1 || corr.count(e.correlation[i]) == 0) continue;
    auto it = cpu.find(e.correlation[i]);
    if (it == cpu.end()) continue;
    for (size_t c : it->second) {
      double cts = static_cast<double>(rows.ts[c]);
      double cdur = static_cast<double>(rows.dur[c]);
      double delay = static_cast<double>(rows.ts[k]) - (cts + cdur);
      pairs.push_back({cdur, static_cast<double>(rows.dur[k]), delay, rows.row[c], i});
      ++s.by_api[std::string(t.strings.Get(e.name[rows.row[c]]))];
    }
  }
  Summarise(pairs, static_cast<double>(config.runtime_cutoff_ns) / 1000.0,
            static_cast<double>(config.launch_delay_cutoff_ns) / 1000.0, &s);
  return s;
}

}  // namespace vigil::trace
