// SPDX-License-Identifier: Apache-2.0
// Internal to path_graph.cc and path_graph_sync.cc: the builder that adds one rank's nodes and
// edges to a PathGraph, and the per-stream index the synchronisation edges look work up in.
// Owner: trace.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "trace/analysis/path_graph.h"

namespace vigil::trace::path_internal {

struct RawEdge {
  uint32_t to = 0;
  PathEdge edge;
};

// One rank's GPU work per (device, stream), in launch order, to answer "the work on this stream
// launched before t that ends last" and "the first work launched at or after t".
class StreamIndex {
 public:
  using Key = std::pair<int32_t, int64_t>;  // (device, stream)
  void Add(Key key, int64_t launch_ts, uint32_t event);
  // After every Add: sorts and builds the prefix maxima of end times.
  void Finish(const std::vector<int64_t>& time);
  uint32_t LastBefore(Key key, int64_t t) const;  // event index or kNoIndex
  uint32_t FirstAtOrAfter(Key key, int64_t t) const;
  std::vector<Key> Keys() const;

 private:
  struct Line {
    std::vector<std::pair<int64_t, uint32_t>> by_launch;  // (launch ts, event)
    std::vector<uint32_t> latest;                         // prefix argmax of end
  };
  std::map<Key, Line> lines_;
};

// The state of one rank while its part of the graph is built.
struct RankBuild {
  const RankTrace* t = nullptr;
  uint32_t rank = 0;
  int64_t offset = 0;
  std::vector<uint32_t> thread_events;  // event indices of CPU rows
  std::vector<uint32_t> gpu_events;     // event indices of GPU rows
  StreamIndex streams;
  // Per event of this rank (index - first): when a blocking call's wait ended (aligned ns),
  // INT64_MIN when it did not wait; and whether the call is a synchronising one.
  uint32_t first = 0;
  std::vector<int64_t> wait_until;
  std::vector<uint8_t> is_sync;
  std::vector<uint32_t> wait_sources;  // per GPU event (index - first): event-wait source or none
  // The trace waits between streams (cudaStreamWaitEvent) without saying on what (no cuda_sync
  // rows): a GPU op's start that neither its stream nor its launch explains is tied to the work
  // on another stream of the device that ended last before it.
  bool infer_waits = false;
};

// The part a GPU op's own time counts as, by its kernel class.
inline PathPart GpuPart(uint8_t cls) {
  switch (static_cast<KernelClass>(cls)) {
    case KernelClass::kComm:
      return PathPart::kGpuComm;
    case KernelClass::kMemory:
      return PathPart::kGpuMemory;
    default:
      return PathPart::kGpuCompute;
  }
}

inline uint32_t StartNode(uint32_t event) { return 2 * event; }
inline uint32_t EndNode(uint32_t event) { return 2 * event + 1; }

// Adds the sync edges (blocking calls) and the event-wait edges of one rank, and fills
// wait_until / is_sync / wait_sources.
void AddSyncEdges(const PathGraph& g, RankBuild* rb, std::vector<RawEdge>* edges,
                  uint64_t* sync_edges, uint64_t* event_wait_edges);

}  // namespace vigil::trace::path_internal
