// SPDX-License-Identifier: Apache-2.0
// The synchronisation edges of the path graph: which GPU work each blocking runtime call waited
// for, and which work each cross-stream event wait ties together. Kineto's cuda_sync rows name the
// stream or the recorded event where the trace has them; otherwise the work that released the call
// (the last to finish inside it) stands in.
#include <algorithm>
#include <string_view>

#include "trace/analysis/path_graph_builder.h"

namespace vigil::trace::path_internal {

void StreamIndex::Add(Key key, int64_t launch_ts, uint32_t event) {
  lines_[key].by_launch.emplace_back(launch_ts, event);
}

void StreamIndex::Finish(const std::vector<int64_t>& time) {
  for (auto& [key, line] : lines_) {
    std::sort(line.by_launch.begin(), line.by_launch.end());
    line.latest.resize(line.by_launch.size());
    for (size_t k = 0; k < line.by_launch.size(); ++k) {
      const uint32_t ev = line.by_launch[k].second;
      line.latest[k] =
          k > 0 && time[EndNode(line.latest[k - 1])] >= time[EndNode(ev)] ? line.latest[k - 1] : ev;
    }
  }
}

uint32_t StreamIndex::LastBefore(Key key, int64_t t) const {
  auto it = lines_.find(key);
  if (it == lines_.end()) return kNoIndex;
  const auto& v = it->second.by_launch;
  auto pos = std::lower_bound(v.begin(), v.end(), std::make_pair(t, uint32_t{0}));
  return pos == v.begin() ? kNoIndex : it->second.latest[static_cast<size_t>(pos - v.begin()) - 1];
}

uint32_t StreamIndex::FirstAtOrAfter(Key key, int64_t t) const {
  auto it = lines_.find(key);
  if (it == lines_.end()) return kNoIndex;
  const auto& v = it->second.by_launch;
  auto pos = std::lower_bound(v.begin(), v.end(), std::make_pair(t, uint32_t{0}));
  return pos == v.end() ? kNoIndex : pos->second;
}

std::vector<StreamIndex::Key> StreamIndex::Keys() const {
  std::vector<Key> keys;
  for (const auto& [key, line] : lines_) keys.push_back(key);
  return keys;
}

namespace {

enum class Wait : uint8_t { kNone, kDevice, kStream, kEvent, kCopy };

Wait WaitOfName(std::string_view n) {
  if (n == "cudaDeviceSynchronize" || n == "hipDeviceSynchronize" || n == "cuCtxSynchronize" ||
      n == "cudaThreadSynchronize") {
    return Wait::kDevice;
  }
  if (n == "cudaStreamSynchronize" || n == "hipStreamSynchronize" || n == "cuStreamSynchronize") {
    return Wait::kStream;
  }
  if (n == "cudaEventSynchronize" || n == "hipEventSynchronize" || n == "cuEventSynchronize") {
    return Wait::kEvent;
  }
  if (n == "cudaMemcpy" || n == "hipMemcpy" || n == "hipMemcpyWithStream" || n == "cuMemcpyDtoH" ||
      n == "cuMemcpyDtoH_v2" || n == "cudaMemcpy2D" || n == "hipMemcpy2D") {
    return Wait::kCopy;
  }
  return Wait::kNone;
}

// A copy to pageable host memory returns only once the data is there, whatever the API.
bool IsPageableDownload(std::string_view gpu_name) {
  return gpu_name.find("Device -> Pageable") != std::string_view::npos ||
         (gpu_name.find("DtoH") != std::string_view::npos &&
          gpu_name.find("Pageable") != std::string_view::npos);
}

// What a cuda_sync row says about the call with its correlation.
struct SyncRow {
  Wait wait = Wait::kNone;
  bool stream_wait = false;  // "Stream Wait Event": between streams, the host does not block
  int32_t device = -1;
  int64_t stream = -1;
  int64_t wait_on_stream = -1;
  int64_t record_corr = -1;
};

int64_t NormalStream(int64_t s) { return s == 4294967295LL ? -1 : s; }

constexpr int64_t kMaxSkewNs = 100'000;

}  // namespace

void AddSyncEdges(const PathGraph& g, RankBuild* rb, std::vector<RawEdge>* edges,
                  uint64_t* sync_edges, uint64_t* event_wait_edges) {
  const RankTrace& t = *rb->t;
  const EventTable& e = t.events;
  // Runtime/driver rows by correlation (the runtime call wins over the driver call).
  std::vector<std::pair<int64_t, uint32_t>> by_corr;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if ((e.kind[i] == EventKind::kRuntime || e.kind[i] == EventKind::kDriver) &&
        e.correlation[i] >= 0) {
      by_corr.emplace_back(e.correlation[i] * 2 + (e.kind[i] == EventKind::kDriver), i);
    }
  }
  std::sort(by_corr.begin(), by_corr.end());
  auto call_of = [&](int64_t corr) -> uint32_t {
    auto it = std::lower_bound(by_corr.begin(), by_corr.end(), std::make_pair(corr * 2, 0u));
    return it != by_corr.end() && it->first / 2 == corr ? it->second : kNoIndex;
  };
  std::vector<std::pair<uint32_t, SyncRow>> sync_rows;  // (call row, what it says)
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kCudaSync || e.correlation[i] < 0) continue;
    const uint32_t call = call_of(e.correlation[i]);
    if (call == kNoIndex) continue;
    SyncRow s;
    std::string_view n = t.strings.Get(e.name[i]);
    s.device = e.device[i];
    s.stream = NormalStream(e.stream[i]);
    if (e.oargs[i] != kNoIndex) {
      s.wait_on_stream = t.op_args[e.oargs[i]].wait_on_stream;
      s.record_corr = t.op_args[e.oargs[i]].wait_on_record_corr;
    }
    if (n == "Stream Wait Event") {
      s.stream_wait = true;
    } else if (n == "Event Sync") {
      s.wait = Wait::kEvent;
    } else if (n == "Stream Sync") {
      s.wait = Wait::kStream;
    } else if (n == "Context Sync" || n == "Device Sync") {
      s.wait = Wait::kDevice;
    }
    sync_rows.emplace_back(call, s);
  }
  std::sort(sync_rows.begin(), sync_rows.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // The GPU work each call launched, for blocking copies.
  std::vector<std::pair<uint32_t, uint32_t>> launched;  // (call event, gpu event)
  for (uint32_t ev : rb->gpu_events) {
    const uint32_t call = t.links.launcher.empty() ? kNoIndex : t.links.launcher[g.row[ev]];
    const uint32_t cev = call == kNoIndex ? kNoIndex : g.EventOf(rb->rank, call);
    if (cev != kNoIndex) launched.emplace_back(cev, ev);
  }
  std::sort(launched.begin(), launched.end());
  const std::vector<StreamIndex::Key> keys = rb->streams.Keys();
  bool wait_calls = false, wait_rows = false;
  for (const auto& [call, row] : sync_rows) wait_rows = wait_rows || row.stream_wait;
  for (uint32_t ev : rb->thread_events) {
    std::string_view n = t.strings.Get(e.name[g.row[ev]]);
    wait_calls = wait_calls || n == "cudaStreamWaitEvent" || n == "hipStreamWaitEvent";
  }
  rb->infer_waits = wait_calls && !wait_rows;
  for (uint32_t ev : rb->thread_events) {
    const uint32_t r = g.row[ev];
    if (e.kind[r] != EventKind::kRuntime && e.kind[r] != EventKind::kDriver) continue;
    Wait w = WaitOfName(t.strings.Get(e.name[r]));
    auto sr = std::lower_bound(sync_rows.begin(), sync_rows.end(), std::make_pair(r, SyncRow()),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
    const SyncRow* row = sr != sync_rows.end() && sr->first == r ? &sr->second : nullptr;
    const int64_t s = g.time[StartNode(ev)], end = g.time[EndNode(ev)];
    if (row != nullptr && row->stream_wait) {
      // Cross-stream: the next work on the waiting stream waits for the recorded work.
      const uint32_t rec = call_of(row->record_corr);
      if (rec == kNoIndex || row->wait_on_stream < 0) continue;
      const uint32_t src = rb->streams.LastBefore({row->device, row->wait_on_stream}, e.ts[rec]);
      const uint32_t dst = rb->streams.FirstAtOrAfter({row->device, row->stream}, e.ts[r]);
      if (src == kNoIndex || dst == kNoIndex) continue;
      edges->push_back(
          {StartNode(dst), {EndNode(src), 0, PathEdgeKind::kEventWait, PathPart::kGap}});
      rb->wait_sources[dst - rb->first] = src;
      ++*event_wait_edges;
      continue;
    }
    if (row != nullptr && row->wait != Wait::kNone) w = row->wait;
    std::vector<uint32_t> waited;
    // GPU and CPU clocks drift apart by microseconds (notably on ROCm): work that ends shortly
    // after the call returned is what it waited for.
    const int64_t skew = std::min<int64_t>(kMaxSkewNs, (end - s) / 10);
    auto consider = [&](uint32_t gev) {
      if (gev != kNoIndex && g.time[EndNode(gev)] > s && g.time[EndNode(gev)] <= end + skew) {
        waited.push_back(gev);
      }
    };
    const int64_t launch_before = e.ts[r];
    if (w == Wait::kDevice) {
      for (const auto& key : keys) {
        if (row == nullptr || row->device < 0 || key.first == row->device) {
          consider(rb->streams.LastBefore(key, launch_before));
        }
      }
    } else if (w == Wait::kStream && row != nullptr && row->stream >= 0) {
      for (const auto& key : keys) {
        if (key.second == row->stream) consider(rb->streams.LastBefore(key, launch_before));
      }
    } else if (w == Wait::kEvent && row != nullptr && row->wait_on_stream >= 0 &&
               call_of(row->record_corr) != kNoIndex) {
      const int64_t rec_ts = e.ts[call_of(row->record_corr)];
      for (const auto& key : keys) {
        if (key.second == row->wait_on_stream) consider(rb->streams.LastBefore(key, rec_ts));
      }
    }
    // Own work: blocking copy APIs, and any copy to pageable host memory.
    auto own = std::lower_bound(launched.begin(), launched.end(), std::make_pair(ev, 0u));
    for (; own != launched.end() && own->first == ev; ++own) {
      std::string_view gname = t.strings.Get(e.name[g.row[own->second]]);
      if (w == Wait::kCopy || IsPageableDownload(gname)) {
        consider(own->second);
        if (w == Wait::kNone) w = Wait::kCopy;
      }
    }
    if (waited.empty() && (w == Wait::kStream || w == Wait::kEvent)) {
      // No cuda_sync row: the work that finished last inside the call released it.
      uint32_t best = kNoIndex;
      for (const auto& key : keys) {
        const uint32_t c = rb->streams.LastBefore(key, launch_before);
        if (c != kNoIndex && g.time[EndNode(c)] > s && g.time[EndNode(c)] <= end + skew &&
            (best == kNoIndex || g.time[EndNode(c)] > g.time[EndNode(best)])) {
          best = c;
        }
      }
      consider(best);
    }
    if (w == Wait::kNone) continue;
    rb->is_sync[ev - rb->first] = 1;
    if (waited.empty()) continue;
    int64_t released = INT64_MIN;
    for (uint32_t gev : waited) released = std::min(end, std::max(released, g.time[EndNode(gev)]));
    rb->wait_until[ev - rb->first] = released;
    for (uint32_t gev : waited) {
      if (g.time[EndNode(gev)] <= end) {
        edges->push_back(
            {EndNode(ev), {EndNode(gev), end - released, PathEdgeKind::kSync, PathPart::kSync}});
      } else {
        // Ended after the return by the clocks: the return follows the work's start, and the
        // time in between is that work's.
        edges->push_back({EndNode(ev),
                          {StartNode(gev), end - g.time[StartNode(gev)], PathEdgeKind::kSync,
                           GpuPart(g.gpu_class[gev])}});
      }
    }
    ++*sync_edges;
  }
}

}  // namespace vigil::trace::path_internal
