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

// numpy's linear percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// Launches summarised as they come: only the delays are kept (for the percentiles, 8 bytes a
// launch) and the ten worst launches.
class LaunchSummary {
 public:
  LaunchSummary(double runtime_cutoff, double delay_cutoff, size_t expected)
      : runtime_cutoff_(runtime_cutoff), delay_cutoff_(delay_cutoff) {
    delays_.reserve(expected);
  }

  void Add(const Pair& p, LaunchStats* s) {
    ++s->n;
    if (p.cpu <= runtime_cutoff_ && p.gpu < p.cpu) ++s->short_kernels;
    if (p.cpu > runtime_cutoff_) ++s->runtime_outliers;
    if (p.delay > delay_cutoff_) ++s->delay_outliers;
    s->cpu_sum += p.cpu;
    s->gpu_sum += p.gpu;
    delays_.push_back(p.delay);
    // Worst first; among equal delays the earlier launch.
    if (worst_.size() < kWorst || p.delay > worst_.back().delay) {
      auto at = std::upper_bound(worst_.begin(), worst_.end(), p.delay,
                                 [](double d, const Pair& w) { return d > w.delay; });
      worst_.insert(at, p);
      if (worst_.size() > kWorst) worst_.pop_back();
    }
  }

  void Finish(LaunchStats* s) {
    if (!delays_.empty()) {
      s->has_delay = true;
      double sum = 0;
      for (double d : delays_) sum += d;
      s->delay_mean = sum / static_cast<double>(delays_.size());
      std::sort(delays_.begin(), delays_.end());
      s->delay_p50 = Percentile(delays_, 0.5);
      s->delay_p95 = Percentile(delays_, 0.95);
    }
    for (const Pair& p : worst_) {
      s->worst_delays.push_back({p.launch_row, p.gpu_row, static_cast<int64_t>(p.delay)});
    }
  }

 private:
  static constexpr size_t kWorst = 10;
  double runtime_cutoff_, delay_cutoff_;
  std::vector<double> delays_;
  std::vector<Pair> worst_;
};

}  // namespace

LaunchStats ComputeLaunchStats(const RankTrace& t, const AnalysisConfig& config) {
  const EventTable& e = t.events;
  LaunchStats s;
  s.unit_ns = 1;
  LaunchSummary summary(static_cast<double>(config.runtime_cutoff_ns),
                        static_cast<double>(config.launch_delay_cutoff_ns), t.links.gpu.size());
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
    summary.Add({cpu, gpu, delay, l, i}, &s);
  }
  summary.Finish(&s);
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
  LaunchSummary summary(static_cast<double>(config.runtime_cutoff_ns) / 1000.0,
                        static_cast<double>(config.launch_delay_cutoff_ns) / 1000.0, 0);
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    if (e.stream[i] == -1 || corr.count(e.correlation[i]) == 0) continue;
    auto it = cpu.find(e.correlation[i]);
    if (it == cpu.end()) continue;
    for (size_t c : it->second) {
      double cts = static_cast<double>(rows.ts[c]);
      double cdur = static_cast<double>(rows.dur[c]);
      double delay = static_cast<double>(rows.ts[k]) - (cts + cdur);
      summary.Add({cdur, static_cast<double>(rows.dur[k]), delay, rows.row[c], i}, &s);
      ++s.by_api[std::string(t.strings.Get(e.name[rows.row[c]]))];
    }
  }
  summary.Finish(&s);
  return s;
}

}  // namespace vigil::trace
