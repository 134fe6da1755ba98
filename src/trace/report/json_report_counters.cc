// SPDX-License-Identifier: Apache-2.0
// The JSON report's per-rank counter summaries: launch queue length per stream and memory
// bandwidth per copy kind (HTA's queue_length_summary and memory_bw_summary).
#include "trace/report/json_report.h"
#include "trace/report/json_sections.h"

namespace vigil::trace {
namespace {

// describe() columns; times (queue length is a count, bandwidth GB/s) need no unit scaling.
void WriteDescribe(const Describe& d, std::string_view suffix, JsonWriter* w) {
  std::string s(suffix);
  w->Field("count", d.count);
  w->Field("mean" + s, d.mean).Field("std" + s, d.std).Field("min" + s, d.min);
  w->Field("p25" + s, d.p25).Field("p50" + s, d.p50).Field("p75" + s, d.p75);
  w->Field("max" + s, d.max);
}

}  // namespace

void JsonQueueLength(const RankReport& r, JsonWriter* w) {
  const QueueLengthSummary& q = r.queue_length;
  w->Key("queue_length").BeginObject();
  w->Key("streams").BeginArray();
  for (const StreamQueueLength& s : q.streams) {
    w->BeginObject().Field("device", s.device).Field("stream", s.stream);
    WriteDescribe(s.stats, "", w);
    w->Field("time_weighted_mean", s.time_weighted_mean);
    w->FieldMicros("time_at_max_us", s.time_at_max * q.unit_ns);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void JsonMemoryBandwidth(const RankReport& r, JsonWriter* w) {
  const MemoryBandwidthSummary& m = r.memory_bw;
  w->Key("memory_bandwidth").BeginObject();
  w->Field("recorded_bandwidth", m.recorded_bandwidth);
  w->Key("kinds").BeginArray();
  for (const MemoryKindBandwidth& k : m.kinds) {
    w->BeginObject().Field("kind", k.kind).Field("ops", k.ops);
    WriteDescribe(k.stats, "_gbps", w);
    w->Field("time_weighted_mean_gbps", k.time_weighted_mean_gbps);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace vigil::trace
