// SPDX-License-Identifier: Apache-2.0
// The JSON "what_if" objects: per rank and for the multi-rank critical path.
#include <algorithm>

#include "trace/report/what_if_report.h"

namespace vigil::trace {
namespace {

constexpr size_t kMovedShown = 5;

void WriteProjection(const Report* report, const RankTrace* single, const WhatIfResult& p,
                     JsonWriter* w) {
  w->BeginObject().Field("name", p.name).Field("valid", p.valid).Field("note", p.note);
  w->FieldMicros("measured_us", p.measured_ns).FieldMicros("projected_us", p.projected_ns);
  w->FieldMicros("gain_us", p.GainNs()).Field("gain_pct", p.GainPct());
  w->FieldMicros("removable_us", p.removable_ns);
  w->Field("bound_by", p.path.BoundBy());
  w->Field("moved_onto_path", static_cast<uint64_t>(p.moved.size()));
  // The longest of the events that moved onto the path.
  auto trace_of = [&](uint32_t rank_index) -> const RankTrace* {
    if (single != nullptr) return single;
    return rank_index < report->ranks.size() ? report->ranks[rank_index].trace : nullptr;
  };
  std::vector<std::pair<uint32_t, uint32_t>> moved = p.moved;
  auto dur = [&](const std::pair<uint32_t, uint32_t>& m) {
    const RankTrace* t = trace_of(m.first);
    return t == nullptr ? int64_t{0} : int64_t{t->events.dur[m.second]};
  };
  const size_t n = std::min(kMovedShown, moved.size());
  std::partial_sort(moved.begin(), moved.begin() + static_cast<ptrdiff_t>(n), moved.end(),
                    [&](const auto& a, const auto& b) { return dur(a) > dur(b); });
  w->Key("moved_events").BeginArray();
  for (size_t k = 0; k < n; ++k) {
    const RankTrace* t = trace_of(moved[k].first);
    if (t == nullptr) continue;
    const uint32_t row = moved[k].second;
    w->BeginObject().Field("rank", t->meta.rank).Field("name", t->strings.Get(t->events.name[row]));
    w->FieldMicros("ts_us", t->events.ts[row]).FieldMicros("dur_us", t->events.dur[row]);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace

void WriteRankWhatIf(const RankReport& r, JsonWriter* w) {
  const WhatIfReport& x = r.what_if;
  w->Key("what_if").BeginObject();
  w->FieldMicros("replayed_device_us", x.replayed_device_ns);
  w->Key("projections").BeginArray();
  for (const WhatIfResult& p : x.projections) WriteProjection(nullptr, r.trace, p, w);
  w->EndArray();
  w->EndObject();
}

void WriteMultiRankWhatIf(const Report& report, JsonWriter* w) {
  w->Key("what_if").BeginArray();
  for (const WhatIfResult& p : report.multi_path.what_if) WriteProjection(&report, nullptr, p, w);
  w->EndArray();
}

}  // namespace vigil::trace
