// SPDX-License-Identifier: Apache-2.0
// Brendan Gregg's folded stack format, the input of flamegraph.pl, speedscope and Pyroscope:
// one line per distinct stack, `root;caller;leaf count`, sorted. ';' and line breaks inside a
// frame name are replaced so every line parses back. Stateless.
#pragma once

#include <string>

#include "profile/profile.h"

namespace vigil {

std::string WriteFolded(const Profile& profile);

// The folded label of one frame (FrameLabel with ';' -> ':' and control characters -> ' ').
std::string FoldedLabel(const ProfileFrame& frame);

}  // namespace vigil
