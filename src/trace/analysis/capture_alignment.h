// SPDX-License-Identifier: Apache-2.0
// Pairs the launches recorded while a CUDA/HIP graph was captured with the GPU work of one of
// its replays. The capture trace has the operators and their shapes but no kernels (they did not
// run); the replay has the kernels but only a graph launch above them. The two lists hold the
// same work in different orders: the capture in CPU program order, the replay in GPU start
// order, which differs when the graph scheduler reorders independent nodes or runs them on
// several streams, and the capture may hold launches that never became graph nodes (a profiler
// artefact). The strategies, tried in turn (the same stages TraceLens's capture merge uses):
//   1. positional: same length, the same name at every position;
//   2. greedy: each replayed kernel takes the next capture launch of its name, skipping others;
//   3. by name: same count of every name, paired in order within each name;
//   4. by stream (replays on several streams): per-stream queues of the replay, each capture
//      launch taking the head of a stream whose head has its name, ties to the longest run.
// A capture launch without a recorded name (CUDA traces do not name the kernel on the call)
// matches any kernel; memcpy and memset calls match replayed copies and sets.
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace vigil::trace {

// One item of either list: a kernel name, or the copy/set token, or unnamed (capture side only).
struct AlignItem {
  enum class Kind : uint8_t { kKernel, kMemcpy, kMemset, kUnnamed };
  Kind kind = Kind::kUnnamed;
  std::string_view name;  // kKernel only
  int64_t stream = -1;    // replay side
};

// How a capture call or replayed GPU event reads as an item: `name` is the kernel name (the
// launch call's "kernel" arg, or the GPU event's name); `call` the runtime call's name on the
// capture side ("" on the replay side).
AlignItem CaptureItem(std::string_view call, std::string_view kernel_name);
AlignItem ReplayItem(std::string_view gpu_name, int64_t stream);

enum class AlignMethod : uint8_t { kNone, kPositional, kGreedy, kByName, kByStream };
std::string_view AlignMethodName(AlignMethod m);

struct Alignment {
  AlignMethod method = AlignMethod::kNone;
  // For each replay item, the index of its capture item; empty when no strategy succeeded.
  std::vector<uint32_t> capture_of;
  bool ok() const { return method != AlignMethod::kNone; }
};

Alignment AlignCaptureToReplay(const std::vector<AlignItem>& capture,
                               const std::vector<AlignItem>& replay);

}  // namespace vigil::trace
