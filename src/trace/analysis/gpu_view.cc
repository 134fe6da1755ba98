// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/gpu_view.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

namespace vigil::trace {
namespace {

bool IsHtaGpuRow(const RankTrace& t, uint32_t i) {
  const EventTable& e = t.events;
  if (e.stream[i] >= 0 && e.correlation[i] >= 0) return true;
  std::string_view n = t.strings.Get(e.name[i]);
  return n == "Event Sync" || n == "Context Sync";
}

bool IsStepName(std::string_view n) { return n.rfind("ProfilerStep#", 0) == 0; }

// The double Python parses from the microsecond text (int64 -> long double is exact).
double MicrosAsDouble(int64_t ns) {
  return static_cast<double>(static_cast<long double>(ns) / 1000.0L);
}

// HTA rounds float timestamps: start up, end (start + dur, in double) down.
void HtaRound(int64_t ts_ns, int64_t dur_ns, int64_t* ts_us, int64_t* dur_us) {
  double ts = MicrosAsDouble(ts_ns);
  double end = ts + MicrosAsDouble(dur_ns);
  int64_t a = static_cast<int64_t>(std::ceil(ts));
  int64_t b = static_cast<int64_t>(std::floor(end));
  *ts_us = a;
  *dur_us = b - a;
}

}  // namespace

void GpuView::Reserve(size_t n) {
  ts.reserve(n);
  dur.reserve(n);
  cls.reserve(n);
  launch_ts.reserve(n);
  launch_dur.reserve(n);
  row.reserve(n);
  is_kernel.reserve(n);
}

HtaRows BuildHtaRows(const RankTrace& t) {
  const EventTable& e = t.events;
  HtaRows out;
  std::vector<int64_t> rts(e.size()), rdur(e.size());
  std::set<uint32_t> step_names;
  for (uint32_t i = 0; i < e.size(); ++i) {
    HtaRound(e.ts[i], e.dur[i], &rts[i], &rdur[i]);
    if (IsStepName(t.strings.Get(e.name[i]))) step_names.insert(e.name[i]);
  }
  auto push = [&](uint32_t i) {
    out.row.push_back(i);
    out.ts.push_back(rts[i]);
    out.dur.push_back(rdur[i]);
  };
  if (step_names.size() <= 1) {
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kTraceSpan) push(i);
    }
    return out;
  }
  out.filtered = true;
  int64_t last_start = INT64_MIN;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kTraceSpan || IsHtaGpuRow(t, i)) continue;
    if (step_names.count(e.name[i]) != 0) last_start = std::max(last_start, rts[i]);
  }
  std::unordered_map<int64_t, uint32_t> kept_corr;
  std::vector<uint32_t> cpu_kept;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kTraceSpan || IsHtaGpuRow(t, i)) continue;
    if (rts[i] < last_start) {
      cpu_kept.push_back(i);
      ++kept_corr[e.correlation[i]];
    }
  }
  // GPU rows first (HTA concatenates the merged GPU rows, then the CPU rows); an inner merge on
  // correlation repeats a GPU row once per kept CPU row with the same correlation.
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kTraceSpan || !IsHtaGpuRow(t, i)) continue;
    auto it = kept_corr.find(e.correlation[i]);
    if (it == kept_corr.end()) continue;
    uint32_t copies = e.stream[i] >= 0 ? it->second : 1;
    for (uint32_t c = 0; c < copies; ++c) push(i);
  }
  for (uint32_t i : cpu_kept) push(i);
  return out;
}

GpuView BuildGpuView(const RankTrace& t, const AnalysisConfig& config) {
  const EventTable& e = t.events;
  GpuView v;
  v.events = &e;
  auto add = [&](uint32_t row, int64_t ts, int64_t dur, int64_t lts, int64_t ldur,
                 KernelClass cls) {
    v.row.push_back(row);
    v.ts.push_back(ts);
    v.dur.push_back(dur);
    v.cls.push_back(cls);
    v.launch_ts.push_back(lts);
    v.launch_dur.push_back(ldur);
    v.is_kernel.push_back(IsGpuKind(e.kind[row]) ? 1 : 0);
  };
  RowClassifier classify(config.classifier, t);
  if (!config.hta_compat) {
    v.unit_ns = 1;
    v.Reserve(t.links.gpu.size());
    for (uint32_t i : t.links.gpu) {
      uint32_t l = t.links.launcher.empty() ? kNoIndex : t.links.launcher[i];
      add(i, e.ts[i], e.dur[i], l == kNoIndex ? kNoTime : e.ts[l], l == kNoIndex ? 0 : e.dur[l],
          classify(i));
    }
    for (const Step& s : t.links.steps) v.kept_steps.push_back(s.number);
    return v;
  }
  v.unit_ns = 1000;
  HtaRows rows = BuildHtaRows(t);
  v.steps_dropped = rows.filtered;
  // HTA's index_correlation: the last CPU row (file order, whole trace) with the correlation.
  std::unordered_map<int64_t, uint32_t> cpu_by_corr;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.correlation[i] != -1 && e.kind[i] != EventKind::kTraceSpan && !IsHtaGpuRow(t, i)) {
      cpu_by_corr[e.correlation[i]] = i;
    }
  }
  std::unordered_map<uint32_t, size_t> kept_pos;  // row -> position in rows (CPU rows are unique)
  for (size_t k = 0; k < rows.row.size(); ++k) kept_pos.emplace(rows.row[k], k);
  std::vector<size_t> order;
  for (size_t k = 0; k < rows.row.size(); ++k) {
    if (e.stream[rows.row[k]] != -1) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rows.ts[a] < rows.ts[b]; });
  v.Reserve(order.size());
  for (size_t k : order) {
    uint32_t i = rows.row[k];
    int64_t lts = kNoTime, ldur = 0;
    auto it = cpu_by_corr.find(e.correlation[i]);
    if (it != cpu_by_corr.end()) {
      auto kp = kept_pos.find(it->second);
      if (kp != kept_pos.end()) {
        lts = rows.ts[kp->second];
        ldur = rows.dur[kp->second];
      }
    }
    KernelClass cls = e.kind[i] == EventKind::kCudaSync ? KernelClass::kOther : classify(i);
    add(i, rows.ts[k], rows.dur[k], lts, ldur, cls);
  }
  for (size_t k = 0; k < rows.row.size(); ++k) {
    uint32_t i = rows.row[k];
    std::string_view n = t.strings.Get(e.name[i]);
    if (IsStepName(n) && !IsHtaGpuRow(t, i) && e.kind[i] != EventKind::kGpuUserAnnotation) {
      v.kept_steps.push_back(std::atoll(std::string(n.substr(13)).c_str()));
    }
  }
  std::sort(v.kept_steps.begin(), v.kept_steps.end());
  v.kept_steps.erase(std::unique(v.kept_steps.begin(), v.kept_steps.end()), v.kept_steps.end());
  return v;
}

}  // namespace vigil::trace
