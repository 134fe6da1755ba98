// SPDX-License-Identifier: Apache-2.0
// Builds the links between the rows of a RankTrace: GPU work to the runtime call that launched it
// (by correlation id, which also expands CUDA/HIP graph launches to all their kernels), the CPU
// call tree per thread, profiler steps, streams; and counts what does not link in DataQuality.
// Owner: trace. Runs once per trace on the reading thread.
#pragma once

#include <string_view>

#include "trace/model/trace_model.h"

namespace vigil::trace {

void LinkTrace(RankTrace* trace);

// Runtime calls that put work on a GPU stream (CUDA, HIP, driver API, graphs).
bool IsLaunchName(std::string_view name);
bool IsGraphLaunchName(std::string_view name);
// Runtime calls that block the CPU until the GPU catches up.
bool IsSyncName(std::string_view name);

}  // namespace vigil::trace
