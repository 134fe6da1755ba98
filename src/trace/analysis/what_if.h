// SPDX-License-Identifier: Apache-2.0
// What-if projections on the critical path: the dependency graph (path_graph.h) is replayed with
// the weights a change implies and the longest path is found again, so the path can move onto
// other events; nothing is subtracted. Each projection reports the projected step time (the
// measured path's start to the replay's last node), the gain and the events that moved onto the
// path. Changes: (a) the GPU idle on the measured path removed, (b) communication fully
// overlapped with computation, (c) every kernel at its roofline time, (d) a kernel category N
// times faster (`--what-if attention=2x`); (e), the slowest rank at the median, is in
// multi_rank_what_if.h. Also the device timeline replayed without idle gaps, which % of roofline
// divides by. docs/critical-path.md has the formulas. Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "trace/analysis/critical_path.h"
#include "trace/analysis/path_graph.h"

namespace vigil::trace {

struct WhatIfResult {
  std::string name;  // "gpu_idle_removed", "comm_overlapped", "roofline", "attention=2x", ...
  bool valid = false;
  std::string note;          // why it could not be projected, or caveats
  int64_t measured_ns = 0;   // the measured critical path's length
  int64_t projected_ns = 0;  // the replay's end - the measured path's start
  int64_t removable_ns = 0;  // the most the change can remove (e.g. GPU idle in the window)
  CriticalPath path;         // the critical path of the replay
  std::vector<std::pair<uint32_t, uint32_t>> moved;  // (rank index, row) now on the path
  int64_t GainNs() const { return measured_ns - projected_ns; }
  double GainPct() const {
    return measured_ns > 0 ? 100.0 * static_cast<double>(GainNs()) / measured_ns : 0.0;
  }
};

// "attention=2x" style: NAME=FACTORx, several comma-separated.
struct WhatIfSpec {
  std::string name;
  double factor = 1;
  std::string Label() const;  // "attention=2x"
};
StatusOr<std::vector<WhatIfSpec>> ParseWhatIfSpecs(std::string_view text);

// A kernel's category ("gemm", "attention", ...) for spec matching; empty when unknown.
using KernelCategoryFn = std::function<std::string_view(const RankTrace&, uint32_t row)>;

// Replays `g` with `weight` and `slack` and reports it against the measured path.
WhatIfResult ProjectWeights(const PathGraph& g, const CriticalPath& measured, std::string name,
                            const std::vector<int64_t>& weight, const std::vector<int64_t>& slack);

// (a) The time on the measured path during which the device (all of a rank's streams) was idle,
// removed from the path's edges.
WhatIfResult ProjectGpuIdleRemoved(const PathGraph& g, const CriticalPath& measured);
// (b) Communication kernels take no time on the path (their data dependencies stay).
WhatIfResult ProjectCommOverlapped(const PathGraph& g, const CriticalPath& measured);
// (c) Every GPU op at roofline_ns[row] (rows of the first rank; -1: unknown, kept as measured).
WhatIfResult ProjectRoofline(const PathGraph& g, const CriticalPath& measured,
                             const std::vector<int64_t>& roofline_ns);
// (d) The GPU ops for which match(rank index, row) holds run `factor` times faster.
WhatIfResult ProjectFaster(const PathGraph& g, const CriticalPath& measured, std::string name,
                           const std::function<bool(uint32_t, uint32_t)>& match, double factor);
// (d) for a spec: kernels of that category (category(row) equal to the name, ignoring case), or
// without a category function those whose name contains it.
WhatIfResult ProjectSpec(const PathGraph& g, const CriticalPath& measured, const WhatIfSpec& spec,
                         const KernelCategoryFn& category = {});

// The device timeline replayed with every GPU op at its measured time (or kernel_ns[row] where
// given and >= 0) and the idle gaps removed, dependencies kept (stream order, event waits,
// collectives): its length in ns.
int64_t ReplayedDeviceLength(const PathGraph& g, const std::vector<int64_t>* kernel_ns = nullptr);
int64_t ReplayedDeviceLength(const RankTrace& trace, const KernelClassifier& classifier);

// GPU idle (no GPU op of the rank on any stream) within [from, to], ns.
int64_t GpuIdleIn(const PathGraph& g, uint32_t rank_index, int64_t from, int64_t to);

// The projections one rank's report carries.
struct WhatIfReport {
  std::vector<WhatIfResult> projections;
  int64_t replayed_device_ns = 0;
  const WhatIfResult* Find(std::string_view name) const;
};
WhatIfReport ComputeWhatIfs(const PathGraph& g, const CriticalPath& measured,
                            const std::vector<WhatIfSpec>& specs,
                            const KernelCategoryFn& category = {});

}  // namespace vigil::trace
