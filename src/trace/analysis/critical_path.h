// SPDX-License-Identifier: Apache-2.0
// Single-rank critical path: walking back from the event that ends last, each step follows what
// the current event waited for: a kernel waits for its launch call (CPU-bound) or the previous
// work on its stream (GPU-bound); a launch call or CPU op waits for the previous CPU event on its
// thread; a synchronising call waits for the GPU work it blocked on. The path's time is then
// split into what it was bound by (GPU compute/communication/memory, CPU, synchronisation, gaps).
// Owner: trace. Pure function of a linked RankTrace (nanoseconds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/analysis/kernel_classifier.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct CriticalPath {
  std::vector<uint32_t> rows;  // event rows on the path, in time order
  int64_t start = 0;           // ns
  int64_t end = 0;
  int64_t gpu_compute = 0;
  int64_t gpu_comm = 0;
  int64_t gpu_memory = 0;
  int64_t cpu = 0;              // CPU ops and runtime calls
  int64_t sync = 0;             // CPU blocked in synchronisation
  int64_t gaps = 0;             // launch latency and idle between path events
  std::string BoundBy() const;  // "gpu_compute", "gpu_comm", "cpu", ...
  int64_t Length() const { return end - start; }
};

CriticalPath ComputeCriticalPath(const RankTrace& trace, const KernelClassifier& classifier,
                                 size_t max_nodes = 1'000'000);

}  // namespace vigil::trace
