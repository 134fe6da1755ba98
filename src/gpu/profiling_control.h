// SPDX-License-Identifier: Apache-2.0
// Process-wide pause of GPU profiling counters (GPM sampling, DCGM profiling fields), so users can
// run Nsight Systems / Nsight Compute without stopping the daemon. Dynolog's RPC methods
// dcgmProfPause {"duration_s": N} / dcgmProfResume and `vigil gpu pause|resume` end here: the
// daemon's RPC handlers call these plain functions (gpu may not include rpc). Backends check
// ProfilingPaused() every tick; while paused, GPM samples are not taken and DCGM profiling is
// paused with dcgmProfPause. Owner: gpu. Thread-safe (atomics).
#pragma once

#include <cstdint>

#include "base/status.h"

namespace vigil {

// Pauses for `duration_s` seconds (Dynolog's default is 300; <= 0 means until resumed).
Status PauseGpuProfiling(int64_t duration_s);
Status ResumeGpuProfiling();
// True while a pause is in force (a timed pause ends by itself).
bool GpuProfilingPaused();
// Seconds left in a timed pause; -1 for an untimed one; 0 when not paused.
int64_t GpuProfilingPauseRemainingSeconds();

}  // namespace vigil
