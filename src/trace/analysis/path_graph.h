// SPDX-License-Identifier: Apache-2.0
// The dependency graph the critical path and the what-if projections run on. Nodes are the start
// and the end of every CPU op and runtime/driver call on its thread, and of every kernel, memcpy
// and memset on its stream. Each edge carries the time the later node needs after the earlier
// one (its weight, measured from the trace):
//   thread order   consecutive boundaries on a thread, weight = the time between them, except
//                  inside a synchronising call, where the wait is not CPU time (below);
//   duration       a GPU op's start to its end, weight = its duration;
//   stream order   the previous op on a stream to the next one's start, weight 0;
//   launch         a launch call's start to its GPU work's start (graph launches fan out to every
//                  kernel they launched), weight = the launch latency;
//   sync           the GPU work a blocking call waited for (cudaStreamSynchronize,
//                  cudaDeviceSynchronize, cudaEventSynchronize, blocking copies, HIP twins) to
//                  the call's return, weight = the return latency after the GPU finished;
//   event wait     cudaStreamWaitEvent: the recorded work on one stream to the next op on the
//                  waiting stream, weight 0 (from Kineto's cuda_sync rows);
//   collective     (joined ranks) every member's arrival to each member's end.
// A node's measured time is at least every predecessor's time plus the edge's weight; what is left
// (a GPU op that started later than anything explains) is the node's slack, counted as a gap.
// Replaying the graph with the measured weights reproduces the trace; the longest path ending at
// the latest node is the critical path. docs/critical-path.md has the details.
// Owner: trace. Built once per rank (or per joined set of ranks), then read-only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/analysis/kernel_classifier.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

// What time on a path was spent on. Every path's parts add up to its length.
enum class PathPart : uint8_t { kGpuCompute, kGpuComm, kGpuMemory, kCpu, kSync, kGap };
inline constexpr int kPathParts = 6;
std::string_view PathPartName(PathPart p);  // "gpu_compute", "gpu_comm", ..., "gaps"

enum class PathEdgeKind : uint8_t {
  kThread,
  kDuration,
  kStream,
  kLaunch,
  kSync,
  kEventWait,
  kCollective,
};

struct PathEdge {
  uint32_t from = 0;  // node
  int64_t weight = 0;
  PathEdgeKind kind = PathEdgeKind::kThread;
  PathPart part = PathPart::kCpu;
};

// The rows a graph keeps: CPU work that started in [from, to] and the GPU work it launched.
struct PathWindow {
  bool windowed = false;
  int64_t from = 0;  // ns, the rank's own clock
  int64_t to = 0;
};

struct PathGraph {
  std::vector<const RankTrace*> traces;  // one per joined rank
  std::vector<int64_t> offset_ns;        // per rank: added to its times
  // Per event (index k): the rank and row. Node 2k is the event's start, 2k + 1 its end.
  std::vector<uint32_t> rank;
  std::vector<uint32_t> row;
  std::vector<uint8_t> gpu_class;  // per event: KernelClass of GPU work, kOther for CPU rows
  std::vector<int64_t> time;       // per node: measured ns (aligned clock)
  std::vector<int64_t> slack;      // per node: time - max(pred time + weight), >= 0
  std::vector<uint32_t> order;     // nodes in topological order
  std::vector<uint32_t> in_begin;  // incoming edges of node v: in[in_begin[v], in_begin[v+1])
  std::vector<PathEdge> in;
  std::vector<std::vector<uint32_t>> index_of;  // per rank, per row: event index or kNoIndex
  uint64_t dropped_edges = 0;     // against the measured time order (clock skew), left out
  uint64_t sync_edges = 0;        // blocking calls tied to the GPU work they waited for
  uint64_t event_wait_edges = 0;  // cross-stream waits
  uint64_t collective_edges = 0;

  size_t nodes() const { return time.size(); }
  size_t events() const { return row.size(); }
  bool IsGpu(uint32_t event) const {
    return IsGpuKind(traces[rank[event]]->events.kind[row[event]]);
  }
  // The event index of a rank's row, or kNoIndex when the graph does not hold it.
  uint32_t EventOf(uint32_t rank_index, uint32_t row_number) const {
    const std::vector<uint32_t>& v = index_of[rank_index];
    return row_number < v.size() ? v[row_number] : kNoIndex;
  }
};

// Builds one rank's graph (all rows when the window is not set).
PathGraph BuildPathGraph(const RankTrace& trace, const KernelClassifier& classifier,
                         const PathWindow& window = {});

// Builds several ranks' graphs into one, with times shifted by offset_ns[r], then ties matched
// collectives: members[r] lists, per collective, each rank's (rank index, row) of its kernel.
struct JoinedCollective {
  std::vector<std::pair<uint32_t, uint32_t>> members;  // (rank index, kernel row)
};
PathGraph BuildJoinedPathGraph(const std::vector<const RankTrace*>& ranks,
                               const std::vector<int64_t>& offset_ns,
                               const std::vector<PathWindow>& windows,
                               const std::vector<JoinedCollective>& collectives,
                               const KernelClassifier& classifier);

}  // namespace vigil::trace
