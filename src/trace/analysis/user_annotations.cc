// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/user_annotations.h"

#include <algorithm>
#include <unordered_map>

namespace vigil::trace {

std::vector<AnnotationStat> AnalyzeUserAnnotations(const RankTrace& t, size_t limit) {
  const EventTable& e = t.events;
  const Links& l = t.links;
  std::unordered_map<uint32_t, AnnotationStat> by_name;
  auto skip = [&](uint32_t i) { return t.strings.Get(e.name[i]).rfind("ProfilerStep#", 0) == 0; };
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kUserAnnotation && !skip(i)) {
      AnnotationStat& s = by_name[e.name[i]];
      ++s.count;
      s.cpu_ns += e.dur[i];
    } else if (e.kind[i] == EventKind::kGpuUserAnnotation && !skip(i)) {
      by_name[e.name[i]].gpu_ns += e.dur[i];
    }
  }
  // Kernel time: attribute each launched GPU event to the innermost enclosing annotation.
  for (uint32_t g : l.gpu) {
    uint32_t launch = l.launcher[g];
    if (launch == kNoIndex || l.parent.empty()) continue;
    for (uint32_t up = l.parent[launch]; up != kNoIndex; up = l.parent[up]) {
      if (e.kind[up] == EventKind::kUserAnnotation && !skip(up)) {
        by_name[e.name[up]].kernel_ns += e.dur[g];
        break;
      }
    }
  }
  std::vector<AnnotationStat> out;
  for (auto& [name, s] : by_name) {
    s.name = std::string(t.strings.Get(name));
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const AnnotationStat& a, const AnnotationStat& b) {
    int64_t x = std::max(a.cpu_ns, a.gpu_ns), y = std::max(b.cpu_ns, b.gpu_ns);
    return x != y ? x > y : a.name < b.name;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace vigil::trace
