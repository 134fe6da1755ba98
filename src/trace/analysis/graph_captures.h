// SPDX-License-Identifier: Apache-2.0
// The graph-capture traces of a CUDA/HIP-graph workload (vLLM, SGLang, xDiT write one per
// captured batch size, TraceLens reads them from a `capture_traces/` folder with an
// `execution_details.json` naming each file's batch size and mode). Replayed graphs show only
// a graph launch above their kernels; the capture holds the operators, with their recorded
// shapes, whose launches became the graph's nodes. Each capture window (StreamBeginCapture ..
// StreamEndCapture on one thread) is a root: its launch calls in order, ready to be aligned
// with a replay (capture_alignment.h).
// Owner: trace. Loaded once per `vigil analyze`; immutable after loading.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/analysis/capture_alignment.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct CaptureRoot {
  uint32_t begin_row = kNoIndex;   // the StreamBeginCapture call
  std::vector<uint32_t> launches;  // launch calls inside the window, by start time
  std::vector<AlignItem> items;    // the same, as alignment items (views into the trace)
};

struct CaptureFile {
  std::string path;
  int64_t batch_size = -1;  // from execution_details.json; -1 when not given
  std::string mode;         // "FULL", "PIECEWISE" or ""
  RankTrace trace;
  std::vector<CaptureRoot> roots;
};

struct GraphCaptures {
  // Heap-allocated so the traces (which LinkedOp and roofline shapes point into) never move.
  std::vector<std::unique_ptr<CaptureFile>> files;
};

// Finds the capture windows of `file->trace` and fills `file->roots`. The file must be at its
// final address (items view its strings).
void FindCaptureRoots(CaptureFile* file);

// `path` is a capture trace, or a folder of them. A folder's execution_details.json (a list of
// {"file", "batch_size", "mode"}) names the files and their batch sizes; without it every trace
// file of the folder is read. NotFound when no file holds a capture window.
StatusOr<std::shared_ptr<const GraphCaptures>> LoadGraphCaptures(const std::string& path);

}  // namespace vigil::trace
