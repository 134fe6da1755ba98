// SPDX-License-Identifier: Apache-2.0
// The hottest functions of a profile, as `perf report` and pprof's `top` show them: self samples
// (the function was the leaf) and total samples (it was anywhere on the stack, counted once per
// stack even under recursion), by frame label. Also the text table `vigil profile` prints.
// Stateless.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace vigil {

struct HotFunction {
  std::string label;  // FrameLabel of the frame (Python frames keep their line).
  std::string module;
  uint64_t self = 0;
  uint64_t total = 0;
};

// Sorted by self, then total, then label; process frames left out. At most `limit` rows.
std::vector<HotFunction> HotFunctions(const Profile& profile, size_t limit);

// A fixed-width table: header, one row per function with self/total counts and percentages.
std::string HotFunctionsText(const Profile& profile, size_t limit);

}  // namespace vigil
