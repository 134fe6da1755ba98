// SPDX-License-Identifier: Apache-2.0
#include "trace/report/perfetto_trace.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace/analysis/intervals.h"
#include "trace/report/json_writer.h"

namespace vigil::trace {
namespace {

constexpr int64_t kRankPidStride = 1'000'000;

void Meta(JsonWriter* w, int64_t pid, int64_t tid, std::string_view what, std::string_view name) {
  w->BeginObject().Field("ph", "M").Field("name", what).Field("pid", pid).Field("tid", tid);
  w->Key("args").BeginObject().Field("name", name).EndObject().EndObject();
}

// `wanted` rows get their GPU track id recorded in *tid_of (for the cross-rank flows).
void WriteRank(const RankReport& r, size_t index, const std::vector<uint32_t>& wanted,
               std::unordered_map<uint32_t, int64_t>* tid_of, JsonWriter* w) {
  const RankTrace& t = *r.trace;
  const EventTable& e = t.events;
  const int64_t cpu_pid = static_cast<int64_t>(index) * kRankPidStride * 2 + 1;
  const int64_t gpu_pid = cpu_pid + kRankPidStride;
  Meta(w, cpu_pid, 0, "process_name", "rank " + std::to_string(r.rank) + " CPU");
  Meta(w, gpu_pid, 0, "process_name", "rank " + std::to_string(r.rank) + " GPU");
  // Overlapping kernels on one stream go to extra lanes (tid = stream * 100 + lane).
  std::map<std::pair<int32_t, int64_t>, std::vector<int64_t>> lane_end;
  std::vector<int64_t> gpu_tid(e.size(), 0);
  std::map<int64_t, std::string> lanes;
  for (uint32_t i : t.links.gpu) {
    auto& ends = lane_end[{e.device[i], e.stream[i]}];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > e.ts[i]) ++lane;
    if (lane == ends.size()) ends.push_back(0);
    ends[lane] = e.end(i);
    int64_t tid = std::max<int64_t>(0, e.stream[i]) * 100 + static_cast<int64_t>(lane);
    gpu_tid[i] = tid;
    lanes[tid] = "stream " + std::to_string(e.stream[i]) +
                 (lane ? " (overlap " + std::to_string(lane) + ")" : "");
  }
  for (const auto& [tid, name] : lanes) Meta(w, gpu_pid, tid, "thread_name", name);
  for (uint32_t row : wanted) (*tid_of)[row] = gpu_tid[row];
  for (uint32_t i = 0; i < e.size(); ++i) {
    EventKind k = e.kind[i];
    if (k == EventKind::kTraceSpan || k == EventKind::kPythonFunction) continue;
    bool gpu = IsGpuKind(k) || k == EventKind::kGpuUserAnnotation;
    w->BeginObject().Field("ph", "X").Field("name", t.strings.Get(e.name[i]));
    w->Field("cat", t.strings.Get(e.cat[i]));
    w->Field("pid", gpu ? gpu_pid : cpu_pid);
    w->Field("tid", IsGpuKind(k) ? gpu_tid[i]
                                 : (gpu ? std::max<int64_t>(0, e.stream[i]) * 100 : e.tid[i]));
    w->FieldMicros("ts", e.ts[i]).FieldMicros("dur", std::max<int64_t>(0, e.dur[i]));
    if (e.correlation[i] >= 0) {
      w->Key("args").BeginObject().Field("correlation", e.correlation[i]).EndObject();
    }
    w->EndObject();
  }
  // GPU busy counter from the merged GPU intervals.
  std::vector<Span> spans;
  for (uint32_t i : t.links.gpu) spans.emplace_back(e.ts[i], e.end(i));
  for (const Span& s : MergeSpans(std::move(spans))) {
    for (auto [ts, v] : {std::pair<int64_t, int>{s.first, 1}, {s.second, 0}}) {
      w->BeginObject().Field("ph", "C").Field("name", "GPU busy").Field("pid", gpu_pid);
      w->FieldMicros("ts", ts).Key("args").BeginObject().Field("busy", int64_t{v}).EndObject();
      w->EndObject();
    }
  }
  for (const MemoryEvent& m : t.memory) {
    if (m.total_allocated < 0) continue;
    w->BeginObject().Field("ph", "C").Field(
        "name", "memory allocated (device " + std::to_string(m.device_id) + ")");
    w->Field("pid", m.device_type == 1 ? gpu_pid : cpu_pid).FieldMicros("ts", m.ts);
    w->Key("args").BeginObject().Field("bytes", m.total_allocated).EndObject().EndObject();
  }
  // Critical path as flows between consecutive path events.
  const std::vector<uint32_t>& path = r.critical_path.rows;
  auto pid_tid = [&](uint32_t i) {
    bool gpu = IsGpuKind(e.kind[i]);
    return std::pair<int64_t, int64_t>{gpu ? gpu_pid : cpu_pid, gpu ? gpu_tid[i] : e.tid[i]};
  };
  for (size_t k = 1; k < path.size(); ++k) {
    uint32_t a = path[k - 1], b = path[k];
    int64_t id = static_cast<int64_t>(index) * 10'000'000 + static_cast<int64_t>(k);
    auto [pa, ta] = pid_tid(a);
    auto [pb, tb] = pid_tid(b);
    w->BeginObject().Field("ph", "s").Field("name", "critical path").Field("cat", "critical_path");
    w->Field("id", id).Field("pid", pa).Field("tid", ta).FieldMicros("ts", e.ts[a]).EndObject();
    w->BeginObject().Field("ph", "f").Field("bp", "e").Field("name", "critical path");
    w->Field("cat", "critical_path").Field("id", id).Field("pid", pb).Field("tid", tb);
    w->FieldMicros("ts", e.ts[b]).EndObject();
  }
}

}  // namespace

std::string RenderPerfettoTrace(const Report& report) {
  JsonWriter w(false);
  w.BeginObject();
  w.Field("displayTimeUnit", "ns");
  w.Key("traceEvents").BeginArray();
  // The cross-rank critical path's crossings: from the last rank to arrive at a collective to
  // the rank that waited for it.
  const MultiRankCriticalPath& mp = report.multi_path;
  std::vector<std::vector<uint32_t>> wanted(report.ranks.size());
  auto member_row = [&](const PathCrossing& x, uint32_t rank_index) {
    for (const CollectiveMember& m : mp.matches.collectives[x.collective].members) {
      if (m.rank_index == rank_index) return m.row;
    }
    return kNoIndex;
  };
  for (const PathCrossing& x : mp.crossings) {
    for (uint32_t ri : {x.waiting_rank_index, x.last_rank_index}) {
      uint32_t row = member_row(x, ri);
      if (ri < wanted.size() && row != kNoIndex) wanted[ri].push_back(row);
    }
  }
  std::vector<std::unordered_map<uint32_t, int64_t>> tid_of(report.ranks.size());
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    WriteRank(report.ranks[i], i, wanted[i], &tid_of[i], &w);
  }
  for (size_t k = 0; k < mp.crossings.size(); ++k) {
    const PathCrossing& x = mp.crossings[k];
    uint32_t from = member_row(x, x.last_rank_index), to = member_row(x, x.waiting_rank_index);
    if (from == kNoIndex || to == kNoIndex) continue;
    const EventTable& fe = report.ranks[x.last_rank_index].trace->events;
    const EventTable& te = report.ranks[x.waiting_rank_index].trace->events;
    int64_t id = 9'000'000'000 + static_cast<int64_t>(k);
    auto gpu_pid = [](size_t index) {
      return static_cast<int64_t>(index) * kRankPidStride * 2 + 1 + kRankPidStride;
    };
    std::string name = "cross-rank critical path: " + mp.matches.collectives[x.collective].Label();
    w.BeginObject().Field("ph", "s").Field("name", name).Field("cat", "critical_path");
    w.Field("id", id).Field("pid", gpu_pid(x.last_rank_index));
    w.Field("tid", tid_of[x.last_rank_index][from]).FieldMicros("ts", fe.ts[from]).EndObject();
    w.BeginObject().Field("ph", "f").Field("bp", "e").Field("name", name);
    w.Field("cat", "critical_path").Field("id", id).Field("pid", gpu_pid(x.waiting_rank_index));
    w.Field("tid", tid_of[x.waiting_rank_index][to]);
    w.FieldMicros("ts", std::max(te.ts[to], te.end(to) - 1)).EndObject();
  }
  for (const Insight& in : report.insights) {
    for (const Evidence& ev : in.evidence) {
      size_t index = 0;
      for (size_t i = 0; i < report.ranks.size(); ++i) {
        if (report.ranks[i].rank == ev.rank) index = i;
      }
      w.BeginObject().Field("ph", "i").Field("s", "p").Field("name", in.id + ": " + ev.name);
      w.Field("pid", static_cast<int64_t>(index) * kRankPidStride * 2 + 1).Field("tid", int64_t{0});
      w.FieldMicros("ts", ev.ts_ns).Key("args").BeginObject().Field("title", in.title);
      w.Field("fix", in.recommendation).EndObject().EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace vigil::trace
