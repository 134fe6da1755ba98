// SPDX-License-Identifier: Apache-2.0
#include "profile/folded_output.h"

#include <algorithm>
#include <vector>

namespace vigil {

std::string FoldedLabel(const ProfileFrame& frame) {
  std::string label = FrameLabel(frame);
  for (char& c : label) {
    if (c == ';') {
      c = ':';
    } else if (static_cast<unsigned char>(c) < 0x20) {
      c = ' ';
    }
  }
  return label;
}

std::string WriteFolded(const Profile& profile) {
  std::vector<std::string> labels;
  labels.reserve(profile.frames().size());
  for (const ProfileFrame& frame : profile.frames()) {
    labels.push_back(FoldedLabel(frame));
  }
  std::vector<std::string> lines;
  lines.reserve(profile.stacks().size());
  for (const auto& [ids, count] : profile.stacks()) {
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i != 0) {
        line += ';';
      }
      line += labels[static_cast<size_t>(ids[i])];
    }
    line += ' ';
    line += std::to_string(count);
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace vigil
