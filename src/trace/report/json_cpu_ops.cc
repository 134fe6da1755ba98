// SPDX-License-Identifier: Apache-2.0
// JSON for the kernel categories and the CPU operator breakdown (docs/trace-json-schema.md).
#include <algorithm>

#include "trace/report/op_sections.h"

namespace vigil::trace {
namespace {

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void WriteOps(const RankTrace& t, const CpuOpBreakdown& b, JsonWriter* w) {
  w->Key("operators").BeginArray();
  for (size_t i = 0; i < std::min(kJsonCpuOpsLimit, b.ops.size()); ++i) {
    const OpStat& s = b.ops[i];
    w->BeginObject();
    w->Field("name", t.strings.Get(s.name)).Field("category", KernelCategoryName(s.category));
    w->Field("count", s.count)
        .FieldMicros("total_us", s.total_ns)
        .FieldMicros("self_us", s.self_ns);
    w->Field("self_pct", Pct(s.self_ns, b.busy_ns));
    w->FieldMicros("gpu_us", s.gpu_ns).FieldMicros("gpu_inclusive_us", s.gpu_inclusive_ns);
    w->Field("gpu_events", s.gpu_events);
    w->EndObject();
  }
  w->EndArray();
  w->Key("modules").BeginArray();
  for (size_t i = 0; i < std::min(kJsonCpuOpsLimit, b.modules.size()); ++i) {
    const ModuleStat& s = b.modules[i];
    w->BeginObject();
    w->Field("name", t.strings.Get(s.name)).Field("kind", s.annotation ? "annotation" : "module");
    w->Field("count", s.count)
        .FieldMicros("total_us", s.total_ns)
        .FieldMicros("self_us", s.self_ns);
    w->FieldMicros("gpu_us", s.gpu_ns).FieldMicros("gpu_inclusive_us", s.gpu_inclusive_ns);
    w->Field("gpu_events", s.gpu_events);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

void WriteCpuOpsJson(const RankReport& r, JsonWriter* w) {
  const RankTrace& t = *r.trace;
  const OpAttribution& a = r.attribution;
  const CpuOpBreakdown& b = r.cpu_ops;
  w->Key("gpu_categories").BeginObject();
  w->FieldMicros("total_us", a.gpu_ns).Field("events", static_cast<uint64_t>(a.size()));
  w->Key("categories").BeginArray();
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    const CategoryTime& ct = a.by_category[static_cast<size_t>(c)];
    if (ct.count == 0) continue;
    w->BeginObject().Field("category", KernelCategoryName(static_cast<KernelCategory>(c)));
    w->FieldMicros("sum_us", ct.ns).Field("count", ct.count).Field("pct", Pct(ct.ns, a.gpu_ns));
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("cpu_ops").BeginObject();
  w->Field("operator_events", b.operator_events).Field("module_events", b.module_events);
  w->Field("distinct_operators", static_cast<uint64_t>(b.ops.size()));
  w->Field("distinct_modules", static_cast<uint64_t>(b.modules.size()));
  w->FieldMicros("busy_us", b.busy_ns);
  w->FieldMicros("gpu_us", b.gpu_ns).FieldMicros("gpu_attributed_us", b.gpu_attributed_ns);
  w->FieldMicros("gpu_in_module_us", b.gpu_in_module_ns);
  w->FieldMicros("gpu_via_graph_us", b.gpu_via_graph_ns);
  w->Field("gpu_events_attributed", a.with_op).Field("gpu_events_in_module", a.with_module);
  w->Field("gpu_events_via_graph", a.graph_events);
  w->Field("gpu_events_without_launch", a.without_launch);
  w->Key("threads").BeginArray();
  for (const ThreadOpTime& th : b.threads) {
    w->BeginObject().Field("pid", th.pid).Field("tid", th.tid).Field("operators", th.operators);
    w->FieldMicros("busy_us", th.busy_ns).EndObject();
  }
  w->EndArray();
  WriteOps(t, b, w);
  w->EndObject();
}

}  // namespace vigil::trace
