// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/cpu_op_breakdown.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <queue>
#include <unordered_map>

namespace vigil::trace {
namespace {

using IsMember = bool (*)(const RankTrace&, uint32_t);

// True when an enclosing member row carries the same name (the row is a recursive call).
bool NestedInSameName(const RankTrace& t, uint32_t row, IsMember member) {
  const uint32_t name = t.events.name[row];
  for (uint32_t r = t.links.parent[row]; r != kNoIndex; r = t.links.parent[r]) {
    if (t.events.name[r] == name && member(t, r)) return true;
  }
  return false;
}

std::vector<uint32_t> Members(const RankTrace& t, IsMember member) {
  std::vector<uint32_t> rows;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    if (member(t, i)) rows.push_back(i);
  }
  return rows;
}

// Adds `ns` to every distinct member name from `row` outwards (row included).
template <typename Add>
void ForEachEnclosingName(const RankTrace& t, uint32_t row, IsMember member, Add add) {
  std::vector<uint32_t> seen;
  for (uint32_t r = row; r != kNoIndex; r = t.links.parent[r]) {
    if (!member(t, r)) continue;
    const uint32_t name = t.events.name[r];
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    add(name);
  }
}

}  // namespace

std::vector<int64_t> ExclusiveTimes(const RankTrace& t, const std::vector<uint32_t>& rows,
                                    std::vector<ThreadOpTime>* threads) {
  const EventTable& e = t.events;
  std::vector<int64_t> self(rows.size(), 0);
  std::vector<uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0u);
  // The linker's order: by thread, start, longer first, row.
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const uint32_t a = rows[x], b = rows[y];
    if (e.pid[a] != e.pid[b]) return e.pid[a] < e.pid[b];
    if (e.tid[a] != e.tid[b]) return e.tid[a] < e.tid[b];
    if (e.ts[a] != e.ts[b]) return e.ts[a] < e.ts[b];
    if (e.dur[a] != e.dur[b]) return e.dur[a] > e.dur[b];
    return a < b;
  });
  for (size_t lo = 0; lo < order.size();) {
    const uint32_t first = rows[order[lo]];
    size_t hi = lo;
    while (hi < order.size() && e.pid[rows[order[hi]]] == e.pid[first] &&
           e.tid[rows[order[hi]]] == e.tid[first]) {
      ++hi;
    }
    // Sweep the thread's boundaries; k indexes its rows in start order, so the innermost open
    // row is the open one with the largest k.
    const size_t m = hi - lo;
    auto row_of = [&](size_t k) { return rows[order[lo + k]]; };
    std::vector<std::pair<int64_t, uint32_t>> ends(m);
    for (size_t k = 0; k < m; ++k) {
      const uint32_t r = row_of(k);
      ends[k] = {e.ts[r] + std::max<int64_t>(0, e.dur[r]), static_cast<uint32_t>(k)};
    }
    std::sort(ends.begin(), ends.end());
    std::vector<uint8_t> ended(m, 0);
    std::priority_queue<uint32_t> open;
    ThreadOpTime th{e.pid[first], e.tid[first], m, 0};
    size_t si = 0, ei = 0;
    int64_t prev = 0;
    while (si < m || ei < m) {
      const int64_t next = si < m ? std::min(e.ts[row_of(si)], ends[ei].first) : ends[ei].first;
      while (!open.empty() && ended[open.top()]) open.pop();
      if (!open.empty()) {
        self[order[lo + open.top()]] += next - prev;
        th.busy_ns += next - prev;
      }
      for (; ei < m && ends[ei].first == next; ++ei) ended[ends[ei].second] = 1;
      for (; si < m && e.ts[row_of(si)] == next; ++si) open.push(static_cast<uint32_t>(si));
      prev = next;
    }
    if (threads != nullptr) threads->push_back(th);
    lo = hi;
  }
  return self;
}

CpuOpBreakdown ComputeCpuOpBreakdown(const RankTrace& t, const OpAttribution& a) {
  const EventTable& e = t.events;
  CpuOpBreakdown out;
  std::unordered_map<uint32_t, OpStat> ops;
  std::unordered_map<uint32_t, ModuleStat> modules;
  // Calls, total and self time.
  const std::vector<uint32_t> op_rows = Members(t, IsOperatorRow);
  const std::vector<int64_t> op_self = ExclusiveTimes(t, op_rows, &out.threads);
  for (size_t i = 0; i < op_rows.size(); ++i) {
    const uint32_t r = op_rows[i];
    OpStat& s = ops[e.name[r]];
    s.name = e.name[r];
    ++s.count;
    s.self_ns += op_self[i];
    if (!NestedInSameName(t, r, IsOperatorRow)) s.total_ns += std::max<int64_t>(0, e.dur[r]);
  }
  const std::vector<uint32_t> mod_rows = Members(t, IsModuleRow);
  const std::vector<int64_t> mod_self = ExclusiveTimes(t, mod_rows, nullptr);
  for (size_t i = 0; i < mod_rows.size(); ++i) {
    const uint32_t r = mod_rows[i];
    ModuleStat& s = modules[e.name[r]];
    s.name = e.name[r];
    s.annotation = e.kind[r] == EventKind::kUserAnnotation;
    ++s.count;
    s.self_ns += mod_self[i];
    if (!NestedInSameName(t, r, IsModuleRow)) s.total_ns += std::max<int64_t>(0, e.dur[r]);
  }
  out.operator_events = op_rows.size();
  out.module_events = mod_rows.size();
  for (const ThreadOpTime& th : out.threads) out.busy_ns += th.busy_ns;
  // GPU time of what they launched.
  std::unordered_map<uint32_t, std::array<int64_t, kKernelCategoryCount>> op_category_ns;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t dur = e.dur[t.links.gpu[i]];
    out.gpu_ns += dur;
    if (a.via_graph[i]) out.gpu_via_graph_ns += dur;
    if (a.op[i] != kNoIndex) {
      out.gpu_attributed_ns += dur;
      OpStat& s = ops[e.name[a.op[i]]];
      s.gpu_ns += dur;
      ++s.gpu_events;
      op_category_ns[s.name][static_cast<size_t>(a.category[i])] += dur;
      ForEachEnclosingName(t, a.op[i], IsOperatorRow,
                           [&](uint32_t name) { ops[name].gpu_inclusive_ns += dur; });
    }
    if (a.module[i] != kNoIndex) {
      out.gpu_in_module_ns += dur;
      ModuleStat& s = modules[e.name[a.module[i]]];
      s.gpu_ns += dur;
      ++s.gpu_events;
      ForEachEnclosingName(t, a.module[i], IsModuleRow,
                           [&](uint32_t name) { modules[name].gpu_inclusive_ns += dur; });
    }
  }
  for (auto& [name, s] : ops) {
    auto it = op_category_ns.find(name);
    if (it == op_category_ns.end()) {
      s.category = CategoryFromOperator(t.strings.Get(name));
    } else {
      const auto& by = it->second;
      const auto most = std::max_element(by.begin(), by.end());
      s.category = *most > 0 ? static_cast<KernelCategory>(most - by.begin())
                             : CategoryFromOperator(t.strings.Get(name));
    }
    out.ops.push_back(s);
  }
  for (auto& [name, s] : modules) out.modules.push_back(s);
  auto by_name = [&](uint32_t x, uint32_t y) { return t.strings.Get(x) < t.strings.Get(y); };
  std::sort(out.ops.begin(), out.ops.end(), [&](const OpStat& x, const OpStat& y) {
    return x.self_ns != y.self_ns ? x.self_ns > y.self_ns : by_name(x.name, y.name);
  });
  std::sort(out.modules.begin(), out.modules.end(), [&](const ModuleStat& x, const ModuleStat& y) {
    return x.total_ns != y.total_ns ? x.total_ns > y.total_ns : by_name(x.name, y.name);
  });
  return out;
}

}  // namespace vigil::trace
