// SPDX-License-Identifier: Apache-2.0
// Runs `vigil analyze` on collected trace files in a child process, so that a trace that makes
// the analyser crash, loop or eat memory costs one failed request, not the fleet service: the
// child has a wall-clock deadline (then SIGKILL) and an address-space limit, and its exit is
// turned into a Status with the first lines of its stderr. The `vigil` binary is found beside
// vigil-fleet's own executable unless named. Owner: fleet (profiling). Thread-safe: each call
// forks its own child.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace vigil {

struct AnalysisRun {
  std::string vigil_binary;  // "" = "vigil" in the directory of /proc/self/exe.
  std::string input;         // A trace file or a directory of rank files.
  std::string json_path;     // Where the child writes the JSON report.
  int threads = 2;
  int64_t timeout_ns = 600LL * 1000000000;
  uint64_t max_address_space_bytes = 16ULL << 30;  // 0 = unlimited; not applied under ASan.
};

// The `vigil` beside the running executable, or "" when there is none.
std::string SiblingVigilBinary();

// OK when the child exited 0 (the report is then at json_path). Otherwise: DeadlineExceeded
// (killed at the deadline), Internal (killed by a signal or failed with its stderr), NotFound
// (no vigil binary).
Status RunAnalysisChild(const AnalysisRun& run);

}  // namespace vigil
