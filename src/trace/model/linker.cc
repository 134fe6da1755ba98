// SPDX-License-Identifier: Apache-2.0
#include "trace/model/linker.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "trace/model/host_blocking.h"

namespace vigil::trace {

bool IsGraphLaunchName(std::string_view n) {
  return n == "cudaGraphLaunch" || n == "hipGraphLaunch" || n == "cudaGraphLaunch_v10000";
}

bool IsLaunchName(std::string_view n) {
  return n == "cudaLaunchKernel" || n == "cudaLaunchKernelExC" || n == "cuLaunchKernel" ||
         n == "cuLaunchKernelEx" || n == "cudaLaunchCooperativeKernel" || n == "hipLaunchKernel" ||
         n == "hipExtModuleLaunchKernel" || n == "hipModuleLaunchKernel" ||
         n == "hipExtLaunchKernel" || n == "cudaMemcpyAsync" || n == "cudaMemsetAsync" ||
         n == "cudaMemcpy" || n == "cudaMemset" || n == "hipMemcpyAsync" || n == "hipMemsetAsync" ||
         n == "hipMemcpy" || n == "hipMemcpyWithStream" || n == "hipMemset" ||
         n == "cudaLaunchKernel_v7000" || IsGraphLaunchName(n) ||
         n == "runFunction - job_prep_and_submit_for_execution";
}

bool IsSyncName(std::string_view n) { return HostBlockingOfName(n) == HostBlocking::kAlways; }

namespace {

void BuildTree(RankTrace* t) {
  const EventTable& e = t->events;
  Links& l = t->links;
  std::vector<uint32_t> parent(e.size(), kNoIndex);
  std::vector<uint32_t> cpu;
  cpu.reserve(static_cast<size_t>(std::count_if(e.kind.begin(), e.kind.end(), IsCpuSideKind)));
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (IsCpuSideKind(e.kind[i])) cpu.push_back(i);
  }
  std::sort(cpu.begin(), cpu.end(), [&](uint32_t a, uint32_t b) {
    if (e.pid[a] != e.pid[b]) return e.pid[a] < e.pid[b];
    if (e.tid[a] != e.tid[b]) return e.tid[a] < e.tid[b];
    if (e.ts[a] != e.ts[b]) return e.ts[a] < e.ts[b];
    if (e.dur[a] != e.dur[b]) return e.dur[a] > e.dur[b];
    return a < b;
  });
  std::vector<uint32_t> stack;
  for (size_t k = 0; k < cpu.size(); ++k) {
    uint32_t i = cpu[k];
    if (k > 0) {
      uint32_t prev = cpu[k - 1];
      if (e.pid[prev] != e.pid[i] || e.tid[prev] != e.tid[i]) stack.clear();
    }
    while (!stack.empty() && e.end(stack.back()) <= e.ts[i]) stack.pop_back();
    // A child must end inside its parent; a partial overlap is not nesting.
    while (!stack.empty() && e.end(i) > e.end(stack.back())) stack.pop_back();
    if (!stack.empty()) parent[i] = stack.back();
    stack.push_back(i);
  }
  cpu = {};
  l.parent = IndexColumn::FromValues(parent);
}

}  // namespace

void LinkTrace(RankTrace* t) {
  const EventTable& e = t->events;
  Links& l = t->links;
  l = Links();
  // Runtime and driver rows by correlation, the runtime call first when both have it (it wins
  // over the driver call), then in row order: 4 bytes a call where a hash map costs ~40.
  std::vector<uint32_t> calls;
  calls.reserve(static_cast<size_t>(std::count_if(e.kind.begin(), e.kind.end(), [](EventKind k) {
    return k == EventKind::kRuntime || k == EventKind::kDriver;
  })));
  l.gpu.reserve(static_cast<size_t>(std::count_if(e.kind.begin(), e.kind.end(), IsGpuKind)));
  bool hip = false, cuda = false;
  for (uint32_t i = 0; i < e.size(); ++i) {
    EventKind k = e.kind[i];
    if ((k == EventKind::kRuntime || k == EventKind::kDriver) && e.correlation[i] >= 0) {
      calls.push_back(i);
      std::string_view n = t->strings.Get(e.name[i]);
      if (n.substr(0, 3) == "hip") hip = true;
      if (n.substr(0, 4) == "cuda") cuda = true;
      if (IsGraphLaunchName(n)) l.graph_launches.push_back(i);
    }
    if (IsGpuKind(k)) l.gpu.push_back(i);
  }
  std::vector<int64_t> call_corr;  // their correlations, for the binary search
  auto order = [&](uint32_t r) {
    return std::make_tuple(e.correlation[r], e.kind[r] != EventKind::kRuntime, r);
  };
  std::sort(calls.begin(), calls.end(),
            [&](uint32_t a, uint32_t b) { return order(a) < order(b); });
  call_corr.reserve(calls.size());
  for (uint32_t r : calls) call_corr.push_back(e.correlation[r]);
  auto launcher_of = [&](int64_t corr) {
    auto it = std::lower_bound(call_corr.begin(), call_corr.end(), corr);
    return it != call_corr.end() && *it == corr ? calls[static_cast<size_t>(it - call_corr.begin())]
                                                : kNoIndex;
  };
  t->meta.runtime_family = hip ? "hip" : (cuda ? "cuda" : "");
  std::sort(l.gpu.begin(), l.gpu.end(),
            [&](uint32_t a, uint32_t b) { return e.ts[a] != e.ts[b] ? e.ts[a] < e.ts[b] : a < b; });
  std::vector<uint32_t> launcher(e.size(), kNoIndex);
  std::vector<uint32_t> launched(e.size(), kNoIndex);  // the first GPU row of each call
  std::map<std::pair<int32_t, int64_t>, size_t> stream_index;
  std::vector<int64_t> stream_last_end;
  for (uint32_t i : l.gpu) {
    const uint32_t call = e.correlation[i] >= 0 ? launcher_of(e.correlation[i]) : kNoIndex;
    if (call != kNoIndex) {
      launcher[i] = call;
      if (launched[call] == kNoIndex) launched[call] = i;
      if (IsGraphLaunchName(t->strings.Get(e.name[call]))) ++l.graph_kernels;
    } else {
      ++t->quality.gpu_without_launch;
    }
    auto key = std::make_pair(e.device[i], e.stream[i]);
    auto [sit, inserted] = stream_index.emplace(key, l.streams.size());
    if (inserted) {
      l.streams.push_back(StreamInfo{e.device[i], e.stream[i], 0, 0});
      stream_last_end.push_back(INT64_MIN);
    }
    StreamInfo& s = l.streams[sit->second];
    ++s.events;
    s.busy_ns += e.dur[i];
    if (e.ts[i] < stream_last_end[sit->second]) ++t->quality.overlapping_kernels_same_stream;
    stream_last_end[sit->second] = std::max(stream_last_end[sit->second], e.end(i));
  }
  // Launches during a stream capture (cudaStreamBeginCapture .. cudaStreamEndCapture on the same
  // thread) only record a graph: no GPU event is expected from them.
  std::map<std::pair<int64_t, int64_t>, int64_t> capture_begin;          // (pid, tid) -> begin ts
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> captures;  // pid, tid, from, to
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kRuntime && e.kind[i] != EventKind::kDriver) continue;
    std::string_view n = t->strings.Get(e.name[i]);
    if (n.find("StreamBeginCapture") != std::string_view::npos) {
      capture_begin[{e.pid[i], e.tid[i]}] = e.ts[i];
    } else if (n.find("StreamEndCapture") != std::string_view::npos) {
      auto it = capture_begin.find({e.pid[i], e.tid[i]});
      if (it != capture_begin.end()) {
        captures.emplace_back(e.pid[i], e.tid[i], it->second, e.end(i));
        capture_begin.erase(it);
      }
    }
  }
  auto captured = [&](uint32_t i) {
    for (const auto& [pid, tid, from, to] : captures) {
      if (e.pid[i] == pid && e.tid[i] == tid && e.ts[i] >= from && e.ts[i] <= to) return true;
    }
    return false;
  };
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kRuntime || e.kind[i] == EventKind::kDriver) {
      std::string_view n = t->strings.Get(e.name[i]);
      if (IsLaunchName(n) && n != "cudaMemcpy" && n != "hipMemcpy") {
        if (launched[i] == kNoIndex && !captures.empty() && captured(i)) continue;
        ++t->quality.launches;
        if (launched[i] == kNoIndex) ++t->quality.launches_without_gpu;
      }
    }
  }
  calls = {};
  call_corr = {};
  l.launcher = IndexColumn::FromValues(launcher);
  launcher = {};
  l.launched = IndexColumn::FromValues(launched);
  launched = {};
  // Profiler steps.
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kCpuOp && e.kind[i] != EventKind::kUserAnnotation) continue;
    std::string_view n = t->strings.Get(e.name[i]);
    if (n.rfind("ProfilerStep#", 0) != 0) continue;
    Step s;
    s.number = std::atoll(std::string(n.substr(13)).c_str());
    s.ts = e.ts[i];
    s.dur = e.dur[i];
    s.row = i;
    l.steps.push_back(s);
  }
  std::sort(l.steps.begin(), l.steps.end(),
            [](const Step& a, const Step& b) { return a.ts < b.ts; });
  if (e.size() > 0) {
    l.first_ts = INT64_MAX;
    l.last_end = INT64_MIN;
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] == EventKind::kTraceSpan) continue;
      l.first_ts = std::min(l.first_ts, e.ts[i]);
      l.last_end = std::max(l.last_end, e.end(i));
    }
    if (l.first_ts == INT64_MAX) l.first_ts = l.last_end = 0;
  }
  BuildTree(t);
}

}  // namespace vigil::trace
