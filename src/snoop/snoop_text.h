// SPDX-License-Identifier: Apache-2.0
// The summary `vigil snoop` prints when a session ends: per process the libraries attached to,
// launches per kernel, sync calls and time per API and per stack, the driver's (and the caching
// allocator's) memory with leak candidates and the size histogram, and copies per direction;
// above them what qualifies every number (sampling, native frames only, warnings). Plain text,
// no terminal escapes. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "snoop/snoop_summary.h"

namespace vigil::snoop {

struct TextOptions {
  size_t max_rows = 10;   // Kernels, APIs and copies shown per process.
  size_t max_stacks = 3;  // Sync stacks and leak groups shown per process.
  size_t max_frames = 8;  // Frames shown per stack.
  size_t width = 0;       // Columns; longer names are cut with "...". 0: no limit.
};

std::string RenderSnoopSummary(const SessionSummary& summary, const TextOptions& options = {});

}  // namespace vigil::snoop
