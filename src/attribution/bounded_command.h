// SPDX-License-Identifier: Apache-2.0
// Runs a helper program (scontrol) found on PATH and returns its standard output, with a
// deadline and an output cap: a hung or chatty helper is killed (its whole process group) rather
// than stalling a collector. No shell is involved; arguments are passed as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace vigil {

struct BoundedCommandResult {
  int exit_code = -1;  // -1 when killed by a signal.
  std::string out;     // Standard output (standard error is discarded).
};

// NotFound when argv[0] is not on PATH; DeadlineExceeded past `deadline_ns`; ResourceExhausted
// when the output exceeds `max_output_bytes`. A non-zero exit is not an error here.
StatusOr<BoundedCommandResult> RunBoundedCommand(const std::vector<std::string>& argv,
                                                 int64_t deadline_ns, size_t max_output_bytes);

// The first executable `name` in the directories of $PATH ("" when none). A name with a '/' is
// returned as it is when executable.
std::string FindOnPath(const std::string& name);

}  // namespace vigil
