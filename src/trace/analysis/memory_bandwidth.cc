// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/memory_bandwidth.h"

#include <algorithm>
#include <map>

#include "trace/analysis/kernel_classifier.h"
#include "trace/analysis/memcpy_analysis.h"

namespace vigil::trace {
namespace {

struct Change {
  int64_t ts;
  double gbps;  // + at a copy's start, - at its end
  bool end;
};

struct KindChanges {
  uint64_t ops = 0;
  std::vector<Change> starts;
  std::vector<Change> ends;
};

// Kineto's recorded bandwidth, or -1.
double Recorded(const RankTrace& t, uint32_t i, const std::unordered_map<uint32_t, double>* given) {
  if (given != nullptr) {
    auto it = given->find(i);
    if (it != given->end()) return it->second;
  }
  uint32_t o = t.events.oargs[i];
  return o == kNoIndex ? -1 : t.op_args[o].memory_bw_gbps;
}

// Bytes per nanosecond is GB/s; a zero duration counts as 1 us (HTA's fix for its series).
double Measured(const RankTrace& t, uint32_t i) {
  const EventTable& e = t.events;
  if (e.bytes[i] < 0) return 0;
  return static_cast<double>(e.bytes[i]) / static_cast<double>(e.dur[i] > 0 ? e.dur[i] : 1000);
}

MemoryKindBandwidth Summarise(std::string kind, KindChanges* k, bool ends_first, bool exact_zero) {
  MemoryKindBandwidth out;
  out.kind = std::move(kind);
  out.ops = k->ops;
  // HTA concatenates the starts, then the ends, and sorts by time.
  std::vector<Change> all = std::move(k->starts);
  all.insert(all.end(), k->ends.begin(), k->ends.end());
  std::stable_sort(all.begin(), all.end(), [&](const Change& a, const Change& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    return ends_first && a.end && !b.end;
  });
  std::vector<double> positive;
  std::vector<BandwidthPoint> points;
  double sum = 0, weighted = 0;
  int64_t busy = 0, active = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    sum += all[i].gbps;
    active += all[i].end ? -1 : 1;
    if (exact_zero && active == 0) sum = 0;  // no rounding residue once every copy has ended
    double v = sum < 0 ? 0 : sum;            // HTA clamps residues below zero
    points.push_back({all[i].ts, v});
    if (v > 0) {
      positive.push_back(v);
      if (i + 1 < all.size()) {
        int64_t d = all[i + 1].ts - all[i].ts;
        weighted += v * static_cast<double>(d);
        busy += d;
      }
    }
  }
  out.stats = DescribeValues(std::move(positive));
  out.time_weighted_mean_gbps = busy > 0 ? weighted / static_cast<double>(busy) : out.stats.mean;
  size_t stride =
      std::max<size_t>(1, (points.size() + kMaxBandwidthPoints - 1) / kMaxBandwidthPoints);
  for (size_t i = 0; i < points.size(); i += stride) out.series.push_back(points[i]);
  if (!points.empty() && out.series.back().ts != points.back().ts) {
    out.series.push_back(points.back());
  }
  return out;
}

}  // namespace

std::string HtaMemoryKind(std::string_view name) {
  if (name.substr(0, 6) == "Memset") return "Memset";
  if (name.substr(0, 6) != "Memcpy") return "Memcpy Unknown";
  return std::string(name.substr(0, 11));
}

MemoryBandwidthSummary ComputeMemoryBandwidth(const RankTrace& t, const HtaRows* hta_rows,
                                              const std::unordered_map<uint32_t, double>* given,
                                              BandwidthTies ties) {
  const EventTable& e = t.events;
  MemoryBandwidthSummary out;
  std::map<std::string, KindChanges> kinds;
  bool all_recorded = true;
  auto add = [&](const std::string& kind, int64_t ts, int64_t dur, double gbps) {
    KindChanges& k = kinds[kind];
    ++k.ops;
    k.starts.push_back({ts, gbps, false});
    k.ends.push_back({ts + dur, -gbps, true});
  };
  if (hta_rows != nullptr) {
    out.unit_ns = 1000;
    const KernelClassifier hta = KernelClassifier::HtaCompat();
    const HtaRows& rows = *hta_rows;
    for (size_t k = 0; k < rows.row.size(); ++k) {
      uint32_t i = rows.row[k];
      if (e.stream[i] == -1) continue;
      std::string_view name = t.strings.Get(e.name[i]);
      if (hta.Classify(name, e.kind[i]) != KernelClass::kMemory) continue;
      double bw = Recorded(t, i, given);
      if (bw < 0) {
        all_recorded = false;
        bw = Measured(t, i);
      }
      add(HtaMemoryKind(name), rows.ts[k], rows.dur[k] == 0 ? 1 : rows.dur[k], bw);
    }
  } else {
    for (uint32_t i : t.links.gpu) {
      if (e.kind[i] != EventKind::kMemcpy && e.kind[i] != EventKind::kMemset) continue;
      if (e.dur[i] <= 0) continue;
      std::string_view name = t.strings.Get(e.name[i]);
      bool pageable = false;
      std::string kind = e.kind[i] == EventKind::kMemset ? "Memset"
                         : name.substr(0, 6) == "Memcpy"
                             ? HtaMemoryKind(name)
                             : "Memcpy " + MemcpyDirection(name, &pageable);
      double bw = Recorded(t, i, given);
      if (bw < 0) {
        all_recorded = false;
        bw = Measured(t, i);
      }
      add(kind, e.ts[i], e.dur[i], bw);
    }
  }
  out.recorded_bandwidth = all_recorded && !kinds.empty();
  bool hta = hta_rows != nullptr;
  bool ends_first = ties == BandwidthTies::kForMode ? !hta : ties == BandwidthTies::kEndsFirst;
  for (auto& [kind, changes] : kinds) {
    out.kinds.push_back(Summarise(kind, &changes, ends_first, !hta));
  }
  return out;
}

}  // namespace vigil::trace
