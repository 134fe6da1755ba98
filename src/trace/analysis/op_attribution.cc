// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/op_attribution.h"

#include "trace/model/linker.h"

namespace vigil::trace {
namespace {

bool IsStepName(std::string_view n) { return n.rfind("ProfilerStep#", 0) == 0; }

}  // namespace

bool IsOperatorRow(const RankTrace& t, uint32_t row) {
  return t.events.kind[row] == EventKind::kCpuOp && !IsStepName(t.strings.Get(t.events.name[row]));
}

bool IsModuleRow(const RankTrace& t, uint32_t row) {
  const EventKind k = t.events.kind[row];
  if (k == EventKind::kPythonFunction) {
    return t.strings.Get(t.events.name[row]).rfind("nn.Module: ", 0) == 0;
  }
  return k == EventKind::kUserAnnotation && !IsStepName(t.strings.Get(t.events.name[row]));
}

uint32_t EnclosingOperator(const RankTrace& t, uint32_t row) {
  if (t.links.parent.empty()) return kNoIndex;
  for (uint32_t r = row; r != kNoIndex; r = t.links.parent[r]) {
    if (IsOperatorRow(t, r)) return r;
  }
  return kNoIndex;
}

uint32_t EnclosingModule(const RankTrace& t, uint32_t row) {
  if (t.links.parent.empty()) return kNoIndex;
  for (uint32_t r = row; r != kNoIndex; r = t.links.parent[r]) {
    if (IsModuleRow(t, r)) return r;
  }
  return kNoIndex;
}

OpAttribution AttributeKernels(const RankTrace& t, const KernelClassifier& classifier) {
  const EventTable& e = t.events;
  const Links& l = t.links;
  OpAttribution out;
  const size_t n = l.gpu.size();
  out.op.assign(n, kNoIndex);
  out.module.assign(n, kNoIndex);
  out.category.assign(n, KernelCategory::kOther);
  out.via_graph.assign(n, 0);
  KernelCategorizer categorize(classifier, t);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t g = l.gpu[i];
    const uint32_t launch = l.launcher.empty() ? kNoIndex : l.launcher[g];
    if (launch == kNoIndex) {
      ++out.without_launch;
    } else {
      out.op[i] = EnclosingOperator(t, launch);
      out.module[i] = EnclosingModule(t, launch);
      out.via_graph[i] = IsGraphLaunchName(t.strings.Get(e.name[launch])) ? 1 : 0;
      out.with_op += out.op[i] != kNoIndex ? 1 : 0;
      out.with_module += out.module[i] != kNoIndex ? 1 : 0;
      out.graph_events += out.via_graph[i];
    }
    out.category[i] = categorize.Categorize(g, out.op[i]);
    CategoryTime& c = out.by_category[static_cast<size_t>(out.category[i])];
    c.ns += e.dur[g];
    ++c.count;
    out.gpu_ns += e.dur[g];
  }
  return out;
}

}  // namespace vigil::trace
