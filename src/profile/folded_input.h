// SPDX-License-Identifier: Apache-2.0
// The folded stack format read back (folded_output.h writes it): one `root;caller;leaf count`
// line per stack. vigil-fleet stores the rolling profiles vigild uploads in this format and
// merges, renders (flame graph, pprof, hot functions) and serves them from the Profile this
// parser rebuilds. Frame kinds come back from the labels FrameLabel writes: "f_[k]" and
// "[kernel]" are kernel frames, "f (file.py:42)" a Python frame, the first frame of every stack a
// process frame when the writer roots stacks at the process (vigild does), everything else
// native. Every limit is checked, so an upload cannot make the reader hold more than it allows.
// Stateless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "profile/profile.h"

namespace vigil {

struct FoldedLimits {
  size_t max_stacks = 200'000;      // Lines.
  size_t max_frames = 1024;         // Per stack.
  size_t max_frame_bytes = 4096;    // Per frame label.
  uint64_t max_count = 1ULL << 40;  // Per line.
  uint64_t max_total = 1ULL << 50;  // Over the profile.
};

// The frame a folded label stands for (the inverse of FoldedLabel for every kind but process).
ProfileFrame FrameFromFoldedLabel(std::string_view label);

// Parses `text`. `root_is_process`: the first frame of each stack is the process name. Lines
// with the same stack add up. InvalidArgument names the first bad line (1-based) and why: no
// count, a count of 0 or over the limit, an empty stack or frame, a control character, a limit.
StatusOr<Profile> ParseFolded(std::string_view text, bool root_is_process,
                              const FoldedLimits& limits = {});

}  // namespace vigil
