// SPDX-License-Identifier: Apache-2.0
// One traced call, as streamed through the BPF ring buffer when a raw trace is asked for
// (--chrome-trace). Times are on the clock Kineto traces use (system_clock, ns since the Unix
// epoch), converted from the BPF monotonic clock once per session, so a snoop trace lines up
// with a Kineto trace of the same process.
#pragma once

#include <cstdint>
#include <string>

namespace vigil::snoop {

enum class ApiGroup { kLaunch, kGraphLaunch, kSync, kAlloc, kFree, kCopy, kOther };

struct RawEvent {
  int64_t start_unix_ns = 0;
  int64_t duration_ns = 0;  // Entry to return; 0 for calls traced on entry only.
  int pid = 0;
  int tid = 0;
  ApiGroup group = ApiGroup::kOther;
  std::string api;        // "cudaLaunchKernel", "cuMemAlloc_v2", ...
  std::string kernel;     // Launches: the kernel's name.
  uint64_t bytes = 0;     // Allocations, frees (when known) and copies.
  uint64_t address = 0;   // Allocations and frees: the device pointer.
  std::string copy_kind;  // Copies: as CopyKind::kind.
};

}  // namespace vigil::snoop
