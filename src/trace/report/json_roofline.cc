// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include "trace/analysis/roofline_math.h"
#include "trace/report/roofline_report.h"

namespace vigil::trace {
namespace {

constexpr size_t kJsonShapes = 50;  // the operator shapes with the most kernel time

int64_t Ns(double ns) { return static_cast<int64_t>(std::llround(ns)); }

void WriteTotals(const RooflineTotals& x, JsonWriter* w) {
  w->Field("pct_of_replayed", x.PctOfReplayed()).Field("pct_of_wall", x.PctOfWall());
  w->Field("coverage", x.Coverage());
  w->Field("kernels", x.kernels).Field("modelled_kernels", x.modelled_kernels);
  w->FieldMicros("kernel_us", x.kernel_ns).FieldMicros("modelled_kernel_us", x.modelled_ns);
  w->FieldMicros("roofline_us", Ns(x.roofline_ns));
  w->FieldMicros("replayed_us", x.replayed_ns).FieldMicros("wall_us", x.wall_ns);
  w->Field("flops", x.flops).Field("bytes", x.bytes);
}

// Kernels replayed from CUDA/HIP graphs and how many got an operator through a graph capture.
void WriteGraphReplay(const Roofline& x, JsonWriter* w) {
  const GraphCaptureSummary& g = x.graph_captures;
  w->Key("graph_replay").BeginObject();
  w->Field("kernels", x.graph_replayed_kernels).Field("captures_given", x.graph_captures_given);
  w->Field("graph_launches", g.graph_launches).Field("matched_launches", g.matched_launches);
  w->Field("replayed_events", g.replayed_events).Field("linked_events", g.linked_events);
  w->Key("alignment").BeginObject();
  for (const auto& [method, n] : g.by_method) w->Field(AlignMethodName(method), n);
  w->EndObject();
  w->EndObject();
}

}  // namespace

void WriteRooflineJson(const RankReport& r, JsonWriter* w) {
  const Roofline& x = r.roofline;
  if (!x.computed) return;
  const RankTrace& t = *r.trace;
  w->Key("roofline").BeginObject();
  w->Field("gpu_model", x.gpu_model);
  w->Field("memory_bandwidth_bytes_per_s", x.memory_bandwidth_bytes_per_s);
  w->Field("main_peak", x.main_peak).Field("main_peak_flops_per_s", x.main_peak_flops_per_s);
  WriteTotals(x.rank, w);
  WriteGraphReplay(x, w);
  w->Key("steps").BeginArray();
  for (const RooflineStep& s : x.steps) {
    w->BeginObject().Field("step", s.number);
    WriteTotals(s.totals, w);
    w->EndObject();
  }
  w->EndArray();
  w->Key("operators").BeginArray();
  for (size_t i = 0; i < std::min(kJsonShapes, x.shapes.size()); ++i) {
    const RooflineShape& s = x.shapes[i];
    const RankTrace& st = s.source != nullptr ? *s.source : t;  // a graph capture's, or ours
    const OpShapes* in = s.shapes < st.op_shapes.size() ? &st.op_shapes[s.shapes] : nullptr;
    const KernelRooflineFigures k =
        KernelRoofline(s.flops, s.bytes, static_cast<double>(s.kernel_ns), s.peak_flops_per_s,
                       x.memory_bandwidth_bytes_per_s);
    w->BeginObject().Field("name", st.strings.Get(s.name)).Field("category", s.category);
    w->Field("input_dims", in ? st.shape_text.Get(in->dims) : std::string_view());
    w->Field("input_types", in ? st.shape_text.Get(in->types) : std::string_view());
    w->Field("peak", s.peak).Field("peak_flops_per_s", s.peak_flops_per_s);
    w->Field("calls", s.calls).Field("kernels", s.kernels);
    w->FieldMicros("kernel_us", s.kernel_ns).FieldMicros("roofline_us", Ns(s.roofline_ns));
    w->Field("flops", s.flops).Field("bytes", s.bytes);
    w->Field("achieved_pct", s.kernel_ns > 0 ? 100.0 * s.roofline_ns / s.kernel_ns : -1.0);
    w->Field("arithmetic_intensity", k.arithmetic_intensity);
    w->Field("achieved_flops_per_s", k.achieved_flops_per_s);
    w->Field("bound", RooflineBoundName(k.bound));
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace vigil::trace
