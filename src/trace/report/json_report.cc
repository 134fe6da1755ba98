// SPDX-License-Identifier: Apache-2.0
#include "trace/report/json_report.h"

#include "trace/analyses.h"
#include "trace/report/json_sections.h"
#include "trace/report/op_sections.h"

namespace vigil::trace {
namespace {

void WriteTemporal(const TemporalBreakdown& t, int64_t u, JsonWriter* w) {
  w->BeginObject();
  w->Field("valid", t.valid);
  w->FieldMicros("kernel_us", t.kernel_time * u);
  w->FieldMicros("idle_us", t.idle * u);
  w->FieldMicros("compute_us", t.compute * u);
  w->FieldMicros("non_compute_us", t.non_compute * u);
  w->FieldMicros("comm_us", t.comm * u);
  w->FieldMicros("memory_us", t.memory * u);
  w->FieldMicros("exposed_comm_us", t.exposed_comm * u);
  w->FieldMicros("exposed_memory_us", t.exposed_memory * u);
  w->Field("idle_pct", t.Pct(t.idle));
  w->Field("compute_pct", t.Pct(t.compute));
  w->Field("non_compute_pct", t.Pct(t.non_compute));
  w->EndObject();
}

void WriteIdleStats(std::string_view prefix, const IdleStats& s, int64_t u, JsonWriter* w) {
  w->FieldMicros(std::string(prefix) + "_us", s.time * u);
  w->Field(std::string(prefix) + "_count", s.count);
}

void WriteIdle(const IdleBreakdown& idle, int64_t u, JsonWriter* w) {
  w->BeginObject();
  w->FieldMicros("host_wait_us", idle.host_wait * u);
  w->FieldMicros("kernel_wait_us", idle.kernel_wait * u);
  w->FieldMicros("other_us", idle.other * u);
  w->Key("streams").BeginArray();
  for (const StreamIdle& s : idle.streams) {
    w->BeginObject();
    w->Field("stream", s.stream);
    WriteIdleStats("host_wait", s.host_wait, u, w);
    WriteIdleStats("kernel_wait", s.kernel_wait, u, w);
    WriteIdleStats("other", s.other, u, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteKernels(const RankReport& r, JsonWriter* w) {
  const int64_t u = r.unit_ns;
  const StringTable& strings = r.trace->strings;
  w->BeginObject();
  w->Key("types").BeginArray();
  for (const KernelTypeTime& t : r.kernels.types) {
    w->BeginObject().Field("type", t.type).FieldMicros("sum_us", t.sum * u).Field("pct", t.pct);
    w->EndObject();
  }
  w->EndArray();
  w->Key("top_kernels").BeginArray();
  for (const TopKernel& k : r.kernels.top) {
    w->BeginObject();
    w->Field("name", k.name).Field("class", KernelClassName(k.cls)).Field("count", k.count);
    w->Field("sum_us", k.sum * static_cast<double>(u) / 1000.0);
    w->Field("max_us", k.max * static_cast<double>(u) / 1000.0);
    w->Field("min_us", k.min * static_cast<double>(u) / 1000.0);
    w->Field("mean_us", k.mean * static_cast<double>(u) / 1000.0);
    w->Field("stddev_us", k.stddev * static_cast<double>(u) / 1000.0);
    w->EndObject();
  }
  w->EndArray();
  w->Key("kernels").BeginArray();
  size_t n = std::min<size_t>(50, r.kernels.kernels.size());
  for (size_t i = 0; i < n; ++i) {
    const KernelStat& k = r.kernels.kernels[i];
    w->BeginObject();
    w->Field("name", strings.Get(k.name)).Field("class", KernelClassName(k.cls));
    w->Field("count", k.count).FieldMicros("sum_us", k.sum * u);
    w->FieldMicros("min_us", k.min * u).FieldMicros("max_us", k.max * u);
    w->Field("mean_us", k.mean * static_cast<double>(u) / 1000.0);
    w->Field("stddev_us", k.stddev * static_cast<double>(u) / 1000.0);
    w->EndObject();
  }
  w->EndArray();
  w->Field("distinct_kernels", static_cast<uint64_t>(r.kernels.kernels.size()));
  w->EndObject();
}

void WriteLaunch(const LaunchStats& s, JsonWriter* w) {
  const double u = static_cast<double>(s.unit_ns) / 1000.0;
  w->BeginObject();
  w->Field("n", s.n).Field("short_kernels", s.short_kernels);
  w->Field("runtime_outliers", s.runtime_outliers).Field("launch_delay_outliers", s.delay_outliers);
  if (s.has_delay) {
    w->Field("launch_delay_mean_us", s.delay_mean * u);
    w->Field("launch_delay_p50_us", s.delay_p50 * u);
    w->Field("launch_delay_p95_us", s.delay_p95 * u);
  } else {
    w->Key("launch_delay_mean_us").Null();
    w->Key("launch_delay_p50_us").Null();
    w->Key("launch_delay_p95_us").Null();
  }
  w->Field("cpu_duration_sum_us", s.cpu_sum * u).Field("gpu_duration_sum_us", s.gpu_sum * u);
  w->Field("graph_launches", s.graph_launches).Field("graph_kernels", s.graph_kernels);
  w->Key("by_api").BeginObject();
  for (const auto& [api, n] : s.by_api) w->Field(api, n);
  w->EndObject();
  w->EndObject();
}

void WriteRank(const RankReport& r, JsonWriter* w) {
  const RankTrace& t = *r.trace;
  w->BeginObject();
  w->Field("rank", r.rank);
  w->Field("file", t.path);
  w->Field("world_size", t.meta.world_size);
  w->Field("runtime", t.meta.runtime_family);
  w->Field("device", t.meta.devices.empty() ? std::string() : t.meta.devices.front().name);
  w->Field("base_time_ns", t.meta.base_time_ns);
  w->Field("steps_dropped", r.view.steps_dropped);
  for (const RankAnalysis& a : RankAnalyses()) {
    if (a.json != nullptr) a.json(r, w);
  }
  w->Key("data_quality");
  WriteDataQuality(t.quality, w);
  w->Key("data_problems");
  WriteDataProblems(t, w);
  w->EndObject();
}

}  // namespace

void JsonTemporal(const RankReport& r, JsonWriter* w) {
  w->Key("temporal_breakdown");
  WriteTemporal(r.temporal, r.unit_ns, w);
}

void JsonSteps(const RankReport& r, JsonWriter* w) {
  w->Key("steps").BeginArray();
  for (const StepReport& s : r.steps) {
    w->BeginObject()
        .Field("step", s.number)
        .FieldMicros("ts_us", s.ts)
        .FieldMicros("dur_us", s.dur);
    w->Key("temporal_breakdown");
    WriteTemporal(s.temporal, r.unit_ns, w);
    w->EndObject();
  }
  w->EndArray();
}

void JsonIdle(const RankReport& r, JsonWriter* w) {
  w->Key("idle_breakdown");
  WriteIdle(r.idle, r.unit_ns, w);
}

void JsonKernels(const RankReport& r, JsonWriter* w) {
  w->Key("kernel_breakdown");
  WriteKernels(r, w);
}

void JsonOverlap(const RankReport& r, JsonWriter* w) {
  const int64_t u = r.unit_ns;
  w->Key("comm_comp_overlap").BeginObject();
  w->FieldMicros("comm_us", r.overlap.comm_time * u);
  w->FieldMicros("overlapped_us", r.overlap.overlapped * u);
  if (r.overlap.has_comm) {
    w->Field("pct", r.overlap.pct);
  } else {
    w->Key("pct").Null();
  }
  w->EndObject();
}

void JsonLaunch(const RankReport& r, JsonWriter* w) {
  w->Key("launch_stats");
  WriteLaunch(r.launch, w);
}

std::string RenderJsonReport(const Report& report, bool pretty) {
  JsonWriter w(pretty);
  w.BeginObject();
  w.Field("schema", int64_t{kJsonSchemaVersion});
  w.Field("mode", report.config.hta_compat ? "hta_compat" : "default");
  w.Key("ranks").BeginArray();
  for (const RankReport& r : report.ranks) WriteRank(r, &w);
  w.EndArray();
  for (const ReportAnalysis& a : ReportAnalyses()) {
    if (a.json != nullptr) a.json(report, &w);
  }
  w.Key("insights");
  WriteInsights(report, &w);
  if (report.diff) {
    w.Key("diff");
    WriteTraceDiffJson(*report.diff, &w);
  }
  if (report.diff) {
    w.Key("diff");
    WriteTraceDiffJson(*report.diff, &w);
  }
  // Totals over the ranks.
  DataQuality total;
  uint64_t truncated = 0;
  for (const RankReport& r : report.ranks) {
    const DataQuality& q = r.trace->quality;
    truncated += q.truncated ? 1 : 0;
    total.bytes_read += q.bytes_read;
    total.events_total += q.events_total;
    total.events_unparsable += q.events_unparsable;
    total.events_without_cat += q.events_without_cat;
    total.negative_durations += q.negative_durations;
    total.float_timestamps += q.float_timestamps;
    total.gpu_without_launch += q.gpu_without_launch;
    total.launches_without_gpu += q.launches_without_gpu;
    total.overlapping_kernels_same_stream += q.overlapping_kernels_same_stream;
    total.python_functions_skipped += q.python_functions_skipped;
    for (const auto& [c, n] : q.unknown_categories) total.unknown_categories[c] += n;
  }
  w.Key("data_quality").BeginObject();
  w.Field("files", static_cast<uint64_t>(report.ranks.size()));
  w.Field("truncated_files", truncated);
  w.Key("totals");
  WriteDataQuality(total, &w);
  w.EndObject();
  w.EndObject();
  std::string out = w.Take();
  out.push_back('\n');
  return out;
}

}  // namespace vigil::trace
