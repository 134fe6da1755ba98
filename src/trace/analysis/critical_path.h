// SPDX-License-Identifier: Apache-2.0
// Single-rank critical path: the longest path through the rank's dependency graph
// (path_graph.h) with the measured durations, ending at the node that happens last. Walking back
// from there, each step follows the predecessor that released the node last: a kernel its launch
// call or the previous work on its stream (or the event it waited on), a CPU boundary the previous
// one on its thread, a synchronising call's return the GPU work it waited for. The path's length
// is split into what it was bound by (GPU compute/communication/memory, CPU, synchronisation,
// gaps), and the parts add up to the length. The same walk runs on a replay of the graph under a
// change (what_if.h). Owner: trace. Pure functions of a PathGraph or a linked RankTrace (ns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/kernel_classifier.h"
#include "trace/analysis/path_graph.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct CriticalPath {
  std::vector<uint32_t> rows;    // event rows on the path (of the first rank), in time order
  std::vector<uint32_t> events;  // graph events on the path (any rank), in time order
  int64_t start = 0;             // ns
  int64_t end = 0;
  int64_t gpu_compute = 0;
  int64_t gpu_comm = 0;
  int64_t gpu_memory = 0;
  int64_t cpu = 0;                // CPU ops, runtime calls and the time between them on a thread
  int64_t sync = 0;               // in synchronising calls, beyond the GPU work they waited for
  int64_t gaps = 0;               // launch latency and GPU idle between path events
  uint64_t sync_edges = 0;        // the graph's blocking calls tied to GPU work
  uint64_t event_wait_edges = 0;  // and cross-stream waits
  std::string BoundBy() const;    // "gpu_compute", "gpu_comm", "cpu", ...
  int64_t Length() const { return end - start; }
  int64_t Part(PathPart p) const;
  int64_t Gpu() const { return gpu_compute + gpu_comm + gpu_memory; }
};

// Node times when the graph runs with these edge weights (one per g.in) and node slack: a node
// with predecessors happens at max(pred + weight) + slack, a node without at its measured time.
std::vector<int64_t> ReplayPathGraph(const PathGraph& g, const std::vector<int64_t>& weight,
                                     const std::vector<int64_t>& slack);
// The edge weights of the graph as measured.
std::vector<int64_t> MeasuredWeights(const PathGraph& g);

// The path ending at the latest node of a replay (`time` from ReplayPathGraph with the same
// weights and slack). `edges_out`, when given, receives the in-edge index taken into each path
// node (kNoIndex for the first).
CriticalPath WalkCriticalPath(const PathGraph& g, const std::vector<int64_t>& time,
                              const std::vector<int64_t>& weight, const std::vector<int64_t>& slack,
                              std::vector<std::pair<uint32_t, uint32_t>>* edges_out = nullptr);

// The measured critical path of a graph, and of a rank (whole trace).
CriticalPath CriticalPathOf(const PathGraph& g);
CriticalPath ComputeCriticalPath(const RankTrace& trace, const KernelClassifier& classifier);

}  // namespace vigil::trace
