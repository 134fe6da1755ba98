// SPDX-License-Identifier: Apache-2.0
// "Did you mean ...?": the valid name closest to a mistyped one (a command, a flag, a threshold).
// Owner: base. Pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// Optimal string alignment distance (insertions, deletions, substitutions and swaps of two
// neighbours each cost 1): "stauts" is 1 from "status".
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is close enough to be a typo (1 edit for names of up to
// 4 letters, leading dashes not counted; else 2, or a third of the name's length for long ones), or
// the only candidate `word` is a prefix of; "" otherwise. Ties go to the first candidate.
std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace vigil
