// SPDX-License-Identifier: Apache-2.0
// One sampling run from start to profile: opens the sampler on the targets, builds stacks as
// samples arrive (so Python frames are read while the thread is still where it was sampled),
// and stops at the deadline or when every target has exited. What `vigil profile` runs locally
// and what the daemon's profile RPC runs for a remote caller. Blocks the calling thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "profile/profile.h"
#include "profile/stack_builder.h"

namespace vigil {

enum class UnwindMode { kFramePointers, kDwarf };

struct ProfileSessionOptions {
  std::vector<int> pids;
  bool all = false;
  std::chrono::milliseconds duration{30000};
  int frequency_hz = 99;
  UnwindMode unwind = UnwindMode::kDwarf;  // DWARF where the stack copy allows it.
  bool python = true;
  bool kernel_stacks = true;
  std::string proc_root = "/proc";
  std::string debug_root = "/usr/lib/debug";
};

struct ProfileSessionResult {
  Profile profile;
  StackBuilderStats stacks;
  uint64_t samples = 0;
  uint64_t lost = 0;
  uint64_t threads = 0;
  bool kernel_stacks = false;
};

StatusOr<ProfileSessionResult> RunProfileSession(const ProfileSessionOptions& options);

}  // namespace vigil
