// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/memcpy_analysis.h"

#include <algorithm>
#include <map>

namespace vigil::trace {

std::string MemcpyDirection(std::string_view name, bool* pageable) {
  *pageable = name.find("Pageable") != std::string_view::npos;
  if (name.rfind("Memset", 0) == 0) return "Memset";
  for (std::string_view d : {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "DtoA", "AtoD"}) {
    if (name.find(d) != std::string_view::npos) return std::string(d);
  }
  return "Other";
}

MemcpyAnalysis AnalyzeMemcpy(const RankTrace& t) {
  const EventTable& e = t.events;
  MemcpyAnalysis out;
  std::map<std::string, MemcpyKindStats> kinds;
  std::vector<uint32_t> pageable;
  for (uint32_t i : t.links.gpu) {
    if (e.kind[i] != EventKind::kMemcpy && e.kind[i] != EventKind::kMemset) continue;
    bool is_pageable = false;
    std::string dir = MemcpyDirection(t.strings.Get(e.name[i]), &is_pageable);
    MemcpyKindStats& k = kinds[dir];
    k.kind = dir;
    ++k.count;
    k.bytes += std::max<int64_t>(e.bytes[i], 0);
    k.dur_ns += e.dur[i];
    out.total_ns += e.dur[i];
    if (is_pageable) {
      ++k.pageable_count;
      k.pageable_bytes += std::max<int64_t>(e.bytes[i], 0);
      out.pageable_ns += e.dur[i];
      out.pageable_bytes += std::max<int64_t>(e.bytes[i], 0);
      pageable.push_back(i);
    }
  }
  for (auto& [name, k] : kinds) out.kinds.push_back(k);
  std::sort(out.kinds.begin(), out.kinds.end(),
            [](const MemcpyKindStats& a, const MemcpyKindStats& b) { return a.dur_ns > b.dur_ns; });
  std::sort(pageable.begin(), pageable.end(), [&](uint32_t a, uint32_t b) {
    return e.bytes[a] != e.bytes[b] ? e.bytes[a] > e.bytes[b] : e.ts[a] < e.ts[b];
  });
  if (pageable.size() > 20) pageable.resize(20);
  out.pageable_rows = std::move(pageable);
  return out;
}

}  // namespace vigil::trace
