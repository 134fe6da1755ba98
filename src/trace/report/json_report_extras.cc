// SPDX-License-Identifier: Apache-2.0
// The JSON report's sections for the analyses beyond HTA's, data quality, cross-rank results and
// insights.
#include <algorithm>

#include "trace/report/json_report.h"
#include "trace/report/roofline_report.h"

namespace vigil::trace {
namespace {

std::string_view RowName(const RankTrace& t, uint32_t row) {
  return row == kNoIndex ? std::string_view() : t.strings.Get(t.events.name[row]);
}

void WriteEventRef(const RankTrace& t, uint32_t row, JsonWriter* w) {
  w->BeginObject();
  w->Field("name", RowName(t, row));
  w->FieldMicros("ts_us", t.events.ts[row]);
  w->FieldMicros("dur_us", t.events.dur[row]);
  w->EndObject();
}

}  // namespace

void WriteDataQuality(const DataQuality& q, JsonWriter* w) {
  w->BeginObject();
  w->Field("truncated", q.truncated);
  if (q.truncated) w->Field("truncation", q.truncation_detail);
  w->Field("bytes_read", q.bytes_read);
  w->Field("events", q.events_total);
  w->Field("unparsable_events", q.events_unparsable);
  w->Field("events_without_category", q.events_without_cat);
  w->Field("negative_durations", q.negative_durations);
  w->Field("fractional_timestamps", q.float_timestamps);
  w->Field("gpu_events_without_launch", q.gpu_without_launch);
  w->Field("launches_without_gpu_event", q.launches_without_gpu);
  w->Field("overlapping_kernels_same_stream", q.overlapping_kernels_same_stream);
  w->Field("python_functions_not_stored", q.python_functions_skipped);
  w->Key("unknown_categories").BeginObject();
  for (const auto& [c, n] : q.unknown_categories) w->Field(c, n);
  w->EndObject();
  w->EndObject();
}

void WriteRankExtras(const RankReport& r, JsonWriter* w) {
  const RankTrace& t = *r.trace;
  const RankExtras& x = r.extras;
  const int64_t u = r.unit_ns;
  w->Key("memcpy").BeginObject();
  w->FieldMicros("total_us", x.memcpy.total_ns);
  w->FieldMicros("pageable_us", x.memcpy.pageable_ns);
  w->Field("pageable_bytes", x.memcpy.pageable_bytes);
  w->Key("kinds").BeginArray();
  for (const MemcpyKindStats& k : x.memcpy.kinds) {
    w->BeginObject().Field("kind", k.kind).Field("count", k.count).Field("bytes", k.bytes);
    w->FieldMicros("dur_us", k.dur_ns).Field("bandwidth_gbps", k.GBps());
    w->Field("pageable_count", k.pageable_count).Field("pageable_bytes", k.pageable_bytes);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("syncs").BeginObject();
  w->Field("count", x.syncs.count).FieldMicros("total_us", x.syncs.total_ns);
  w->Field("max_per_step", x.syncs.max_per_step);
  w->Key("by_api").BeginObject();
  for (const auto& [api, c] : x.syncs.by_api) {
    w->Key(api).BeginObject().Field("count", c.count).FieldMicros("dur_us", c.dur_ns).EndObject();
  }
  w->EndObject();
  w->Key("by_cause").BeginObject();
  for (const auto& [cause, c] : x.syncs.by_cause) {
    w->Key(cause).BeginObject().Field("count", c.count).FieldMicros("dur_us", c.dur_ns).EndObject();
  }
  w->EndObject();
  w->Key("longest").BeginArray();
  for (const SyncPoint& p : x.syncs.longest) {
    w->BeginObject().Field("api", RowName(t, p.row)).Field("cause", RowName(t, p.cause_row));
    w->FieldMicros("ts_us", t.events.ts[p.row]).FieldMicros("dur_us", t.events.dur[p.row]);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("launch_bound").BeginObject();
  w->Field("kernels", x.launch_bound.kernels).Field("short_kernels", x.launch_bound.short_kernels);
  w->FieldMicros("short_kernel_us", x.launch_bound.short_kernel_time * u);
  w->FieldMicros("host_wait_gaps_us", x.launch_bound.host_wait_gaps * u);
  w->Key("stretches").BeginArray();
  for (const LaunchBoundStretch& s : x.launch_bound.stretches) {
    w->BeginObject().Field("stream", s.stream).FieldMicros("ts_us", s.start * u);
    w->FieldMicros("dur_us", (s.end - s.start) * u).Field("kernels", s.kernels);
    w->FieldMicros("gpu_busy_us", s.gpu_busy * u).EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->Key("kernel_sequences").BeginArray();
  for (const KernelSequence& s : x.sequences) {
    w->BeginObject();
    w->Key("kernels").BeginArray();
    for (uint32_t n : s.names) w->String(t.strings.Get(n));
    w->EndArray();
    w->Field("count", s.count)
        .FieldMicros("total_us", s.total * u)
        .FieldMicros("gaps_us", s.gaps * u);
    w->EndObject();
  }
  w->EndArray();
  w->Key("user_annotations").BeginArray();
  for (const AnnotationStat& a : x.annotations) {
    w->BeginObject().Field("name", a.name).Field("count", a.count);
    w->FieldMicros("cpu_us", a.cpu_ns).FieldMicros("gpu_us", a.gpu_ns);
    w->FieldMicros("kernel_us", a.kernel_ns).EndObject();
  }
  w->EndArray();
  w->Key("memory").BeginArray();
  for (const DeviceMemory& d : x.memory) {
    w->BeginObject().Field("device_type", d.device_type).Field("device_id", d.device_id);
    w->Field("events", d.events).Field("peak_allocated_bytes", d.peak_allocated);
    w->FieldMicros("peak_ts_us", d.peak_ts).Field("peak_reserved_bytes", d.peak_reserved);
    w->Field("capacity_bytes", d.capacity).Field("peak_pct", d.peak_pct);
    w->EndObject();
  }
  w->EndArray();
  const CriticalPath& cp = x.critical_path;
  w->Key("critical_path").BeginObject();
  w->FieldMicros("ts_us", cp.start).FieldMicros("length_us", cp.Length());
  w->Field("bound_by", cp.BoundBy()).Field("events", static_cast<uint64_t>(cp.rows.size()));
  w->FieldMicros("gpu_compute_us", cp.gpu_compute).FieldMicros("gpu_comm_us", cp.gpu_comm);
  w->FieldMicros("gpu_memory_us", cp.gpu_memory).FieldMicros("cpu_us", cp.cpu);
  w->FieldMicros("sync_us", cp.sync).FieldMicros("gaps_us", cp.gaps);
  w->Key("longest_events").BeginArray();
  std::vector<uint32_t> rows = cp.rows;
  std::sort(rows.begin(), rows.end(),
            [&](uint32_t a, uint32_t b) { return t.events.dur[a] > t.events.dur[b]; });
  for (size_t i = 0; i < std::min<size_t>(10, rows.size()); ++i) WriteEventRef(t, rows[i], w);
  w->EndArray();
  w->EndObject();
  const Efficiency& e = x.efficiency;
  w->Key("efficiency").BeginObject();
  w->FieldMicros("compute_us", e.compute_time * u);
  w->Field("sm_efficiency_pct", e.sm_efficiency_pct).Field("occupancy_pct", e.occupancy_pct);
  w->FieldMicros("tensor_core_us", e.tensor_core_time * u)
      .Field("tensor_core_pct", e.TensorCorePct());
  w->FieldMicros("gemm_us", e.gemm_time * u)
      .FieldMicros("gemm_without_tensor_cores_us", e.gemm_no_tc_time * u);
  w->Field("total_flops", e.total_flops).Field("achieved_flops_per_s", e.achieved_flops_per_s);
  w->Field("gpu_model", e.gpu_model).Field("peak_flops_per_s", e.peak_flops_per_s);
  w->Field("roofline_pct", e.roofline_pct);
  w->EndObject();
  WriteRooflineJson(r, w);
}

void WriteCrossRank(const CrossRank& c, JsonWriter* w) {
  w->BeginObject();
  w->FieldMicros("median_compute_us", c.median_compute_ns);
  w->FieldMicros("median_step_us", c.median_step_ns);
  w->Key("ranks").BeginArray();
  for (const RankSummary& s : c.ranks) {
    w->BeginObject().Field("rank", s.rank).FieldMicros("step_us", s.step_ns);
    w->FieldMicros("compute_us", s.compute_ns).FieldMicros("comm_us", s.comm_ns);
    w->FieldMicros("idle_us", s.idle_ns).FieldMicros("span_us", s.span_ns).EndObject();
  }
  w->EndArray();
  w->Key("stragglers").BeginArray();
  for (const Straggler& s : c.stragglers) {
    w->BeginObject().Field("rank", s.rank).Field("metric", s.metric);
    w->Field("excess_pct", s.excess_pct).EndObject();
  }
  w->EndArray();
  w->Key("kernel_spread").BeginArray();
  for (const KernelSpread& s : c.spread) {
    w->BeginObject()
        .Field("name", s.name)
        .FieldMicros("min_us", s.min_ns)
        .Field("min_rank", s.min_rank);
    w->FieldMicros("max_us", s.max_ns).Field("max_rank", s.max_rank).EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteInsights(const Report& report, JsonWriter* w) {
  w->BeginArray();
  for (const Insight& in : report.insights) {
    w->BeginObject();
    w->Field("id", in.id).Field("severity", SeverityName(in.severity)).Field("title", in.title);
    w->Field("detail", in.detail);
    w->Key("evidence").BeginArray();
    for (const Evidence& e : in.evidence) {
      w->BeginObject().Field("what", e.what).Field("name", e.name).Field("rank", e.rank);
      w->FieldMicros("ts_us", e.ts_ns).FieldMicros("dur_us", e.dur_ns).Field("value", e.value);
      w->EndObject();
    }
    w->EndArray();
    w->Field("estimated_gain_pct", in.estimated_gain_pct);
    w->Field("recommendation", in.recommendation);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace vigil::trace
