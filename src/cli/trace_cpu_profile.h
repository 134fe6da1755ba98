// SPDX-License-Identifier: Apache-2.0
// `vigil trace --with-cpu-profile FILE`: a CPU profile of the traced processes over the trace's
// own window. Each host's vigild samples them (vigilProfile, the job's processes resolved by the
// daemon, or the pids given) from the trace's start time for its duration; the profiles are
// merged under each host's name and written as `vigil profile --json` writes one, so
// `vigil analyze TRACE --cpu-profile FILE` shows the host's hot functions beside the GPU's idle
// time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/cli_context.h"

namespace vigil {

struct TraceCpuProfileRequest {
  std::vector<std::string> hosts;  // vigild hosts whose trace matched something
  std::string job_id;              // the trace's job, resolved by each daemon; or
  std::vector<int> pids;           // the pids the trace named
  int64_t start_unix_ms = 0;       // the trace's PROFILE_START_TIME
  int64_t duration_ms = 0;
  std::string path;  // where the merged profile goes
};

// Blocks until the window has passed. Returns a one-line summary for the terminal; an error only
// when no host returned a profile (each host's failure is named in the summary).
StatusOr<std::string> TakeTraceCpuProfile(const CliContext& ctx,
                                          const TraceCpuProfileRequest& request);

}  // namespace vigil
