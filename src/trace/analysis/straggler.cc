// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/straggler.h"

#include <algorithm>
#include <map>

#include "trace/model/trace_model.h"
#include "trace/results/report.h"

namespace vigil::trace {
namespace {

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

void ComputeCrossRank(const std::vector<RankReport>& ranks, CrossRank* out, double pct) {
  *out = CrossRank();
  std::vector<int64_t> computes, steps;
  for (const RankReport& r : ranks) {
    RankSummary s;
    s.rank = r.rank;
    int64_t u = r.unit_ns;
    s.compute_ns = r.temporal.compute * u;
    s.comm_ns = r.temporal.comm * u;
    s.idle_ns = r.temporal.idle * u;
    s.span_ns = r.temporal.kernel_time * u;
    if (!r.steps.empty()) {
      int64_t sum = 0;
      for (const StepReport& st : r.steps) sum += st.dur;
      s.step_ns = sum / static_cast<int64_t>(r.steps.size());
      steps.push_back(s.step_ns);
    }
    computes.push_back(s.compute_ns);
    out->ranks.push_back(s);
  }
  out->median_compute_ns = Median(computes);
  out->median_step_ns = Median(steps);
  if (ranks.size() >= 2) {
    for (const RankSummary& s : out->ranks) {
      if (out->median_compute_ns > 0) {
        double ex = 100.0 * static_cast<double>(s.compute_ns - out->median_compute_ns) /
                    static_cast<double>(out->median_compute_ns);
        if (ex > pct) out->stragglers.push_back({s.rank, ex, "compute"});
      }
      if (out->median_step_ns > 0 && s.step_ns > 0) {
        double ex = 100.0 * static_cast<double>(s.step_ns - out->median_step_ns) /
                    static_cast<double>(out->median_step_ns);
        if (ex > pct) out->stragglers.push_back({s.rank, ex, "step"});
      }
    }
    std::sort(out->stragglers.begin(), out->stragglers.end(),
              [](const Straggler& a, const Straggler& b) { return a.excess_pct > b.excess_pct; });
  }
  if (ranks.size() < 2) return;
  // Spread of the first rank's top kernels.
  const RankReport& first = ranks.front();
  size_t n = std::min<size_t>(10, first.kernels.kernels.size());
  for (size_t k = 0; k < n; ++k) {
    std::string name(first.trace->strings.Get(first.kernels.kernels[k].name));
    KernelSpread sp;
    sp.name = name;
    bool init = false;
    for (const RankReport& r : ranks) {
      int64_t sum = 0;
      uint32_t id = r.trace->strings.Find(name);
      for (const KernelStat& ks : r.kernels.kernels) {
        if (ks.name == id) sum += ks.sum * r.unit_ns;
      }
      if (!init || sum < sp.min_ns) {
        sp.min_ns = sum;
        sp.min_rank = r.rank;
      }
      if (!init || sum > sp.max_ns) {
        sp.max_ns = sum;
        sp.max_rank = r.rank;
      }
      init = true;
    }
    out->spread.push_back(sp);
  }
}

void ApplyArrivalStragglers(const std::vector<const RankTrace*>& ranks,
                            const CollectiveMatches& matches, double pct, CrossRank* out) {
  const std::vector<RankArrivals> a = LastArrivals(ranks, matches);
  std::vector<int64_t> spans;
  for (const RankTrace* t : ranks) spans.push_back(t->links.last_end - t->links.first_ts);
  const int64_t span = Median(spans);
  std::vector<Straggler> found;
  for (uint32_t r = 0; r < a.size(); ++r) {
    if (a[r].late_ns <= 0) continue;
    Straggler s;
    s.rank = ranks[r]->meta.rank;
    s.rank_index = r;
    s.metric = "arrival";
    s.excess_pct = span > 0 ? 100.0 * static_cast<double>(a[r].late_ns) / span : 0.0;
    s.last_arrivals = a[r].last;
    s.collectives = a[r].collectives;
    s.late_ns = a[r].late_ns;
    found.push_back(s);
  }
  if (found.empty()) return;
  std::sort(found.begin(), found.end(), [](const Straggler& x, const Straggler& y) {
    return x.late_ns != y.late_ns ? x.late_ns > y.late_ns : x.rank_index < y.rank_index;
  });
  // The ranks the others waited for beyond the threshold; the latest is always named.
  out->stragglers.clear();
  for (const Straggler& s : found) {
    if (out->stragglers.empty() || s.excess_pct > pct) out->stragglers.push_back(s);
  }
}

}  // namespace vigil::trace
