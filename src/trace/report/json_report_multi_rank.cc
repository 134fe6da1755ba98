// SPDX-License-Identifier: Apache-2.0
// The JSON report's "multi_rank_critical_path" object (documented in docs/trace-json-schema.md).
#include <algorithm>

#include "trace/report/json_report.h"
#include "trace/report/json_sections.h"
#include "trace/report/what_if_report.h"

namespace vigil::trace {
namespace {

constexpr size_t kMaxCrossings = 50;
constexpr size_t kTopSegments = 10;

int32_t RankOf(const Report& report, uint32_t index) {
  return index < report.ranks.size() ? report.ranks[index].rank : -1;
}

std::string_view RowName(const Report& report, uint32_t index, uint32_t row) {
  const RankTrace& t = *report.ranks[index].trace;
  return t.strings.Get(t.events.name[row]);
}

}  // namespace

void JsonMultiRankPath(const Report& report, JsonWriter* w) {
  if (report.ranks.size() < 2) return;
  w->Key("multi_rank_critical_path");
  const MultiRankCriticalPath& p = report.multi_path;
  const CollectiveMatches& m = p.matches;
  w->BeginObject();
  w->Field("valid", p.valid).Field("note", p.note);
  if (p.step >= 0) {
    w->Field("step", p.step);
  } else {
    w->Key("step").Null();
  }
  w->FieldMicros("ts_us", p.start).FieldMicros("length_us", p.Length());
  w->Field("bound_by", p.BoundBy());
  for (int c = 0; c < 5; ++c) {
    w->FieldMicros(std::string(PathCategoryName(static_cast<PathCategory>(c))) + "_us",
                   p.by_category[c]);
  }
  w->Key("collectives").BeginObject();
  w->Field("identity", m.recorded_args ? "recorded_args" : "kernel_order_per_stream");
  w->Field("comm_kernels", m.comm_kernels);
  w->Field("matched", static_cast<uint64_t>(m.collectives.size()));
  w->Field("unmatched_kernels", m.unmatched);
  w->EndObject();
  w->Key("clock_alignment").BeginArray();
  for (uint32_t r = 0; r < m.offset_ns.size(); ++r) {
    w->BeginObject().Field("rank", RankOf(report, r)).Field("aligned", m.aligned[r] != 0);
    w->FieldMicros("offset_us", m.offset_ns[r]);
    uint32_t c = m.align_collective[r];
    w->Field("collective", c == kNoIndex ? std::string() : m.collectives[c].Label());
    w->EndObject();
  }
  w->EndArray();
  w->Key("ranks").BeginArray();
  for (const RankPathShare& s : p.ranks) {
    w->BeginObject().Field("rank", s.rank).FieldMicros("path_us", s.ns).Field("pct", s.pct);
    w->EndObject();
  }
  w->EndArray();
  w->Field("crossings_total", static_cast<uint64_t>(p.crossings.size()));
  w->Key("crossings").BeginArray();
  std::vector<size_t> order(p.crossings.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return p.crossings[a].wait_ns > p.crossings[b].wait_ns;
  });
  order.resize(std::min(order.size(), kMaxCrossings));
  for (size_t i : order) {
    const PathCrossing& x = p.crossings[i];
    w->BeginObject().Field("collective", m.collectives[x.collective].Label());
    w->Field("waiting_rank", RankOf(report, x.waiting_rank_index));
    w->Field("last_rank", RankOf(report, x.last_rank_index));
    w->FieldMicros("arrival_us", x.arrival).FieldMicros("wait_us", x.wait_ns);
    w->FieldMicros("late_by_us", x.late_by_ns).EndObject();
  }
  w->EndArray();
  w->Key("top_segments").BeginArray();
  for (size_t i : p.TopSegments(kTopSegments)) {
    const PathSegment& s = p.segments[i];
    w->BeginObject().Field("rank", RankOf(report, s.rank_index));
    w->Field("name", RowName(report, s.rank_index, s.row));
    w->Field("category", PathCategoryName(s.category));
    w->FieldMicros("ts_us", s.start).FieldMicros("dur_us", s.end - s.start).EndObject();
  }
  w->EndArray();
  WriteMultiRankWhatIf(report, w);
  w->EndObject();
}

}  // namespace vigil::trace
