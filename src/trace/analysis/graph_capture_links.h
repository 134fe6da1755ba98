// SPDX-License-Identifier: Apache-2.0
// Links the GPU work of every graph replay in a trace to the launch calls of the capture it
// replays (graph_captures.h), so each replayed kernel can get the work of the operator that
// launched it at capture time. A replay is matched to a capture window by its kernels: each
// distinct kernel sequence is aligned (capture_alignment.h) with every window once; replays
// with the same sequence that several windows match (vLLM's piecewise graphs: one window per
// layer, alike) take them in turn, as one forward replays them in turn. Where the replay runs
// inside vLLM/SGLang's `execute_<batch>_context...` annotation and the captures name their
// batch sizes, the capture of the smallest batch size at least that large is preferred (graphs
// are replayed padded to a captured size), and the mode (one graph: FULL, several: PIECEWISE).
// Owner: trace. Pure function of the trace, its GpuView and the captures.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "trace/analysis/capture_alignment.h"
#include "trace/analysis/gpu_view.h"
#include "trace/analysis/graph_captures.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct CaptureLink {
  uint32_t file = kNoIndex;          // index into GraphCaptures::files; kNoIndex: not linked
  uint32_t launch_row = kNoIndex;    // the capture's launch call (row of that file's trace)
  uint32_t graph_launch = kNoIndex;  // the replay's graph launch call (row of this trace)
};

struct GraphCaptureSummary {
  uint64_t graph_launches = 0;                // graph launches with GPU work in the view
  uint64_t matched_launches = 0;              // of them, aligned with a capture window
  uint64_t replayed_events = 0;               // GPU events under graph launches
  uint64_t linked_events = 0;                 // of them, paired with a capture launch
  std::map<AlignMethod, uint64_t> by_method;  // matched launches per alignment strategy
};

struct GraphCaptureLinks {
  const GraphCaptures* captures = nullptr;
  std::vector<CaptureLink> of_view_row;  // per GpuView row (empty when nothing is linked)
  GraphCaptureSummary summary;
};

GraphCaptureLinks LinkGraphCaptures(const RankTrace& trace, const GpuView& view,
                                    const GraphCaptures& captures);

// The batch size vLLM and SGLang put in their step annotations: "execute_32_context_0(...)..."
// is 32; "execute_context_3(1_2)_generation_5(...)" is the sum of the parenthesised counts.
// -1 when the name is neither.
int64_t ExecuteAnnotationBatch(std::string_view name);

}  // namespace vigil::trace
