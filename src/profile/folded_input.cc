// SPDX-License-Identifier: Apache-2.0
#include "profile/folded_input.h"

#include <string>
#include <vector>

#include "base/strings.h"

namespace vigil {
namespace {

constexpr std::string_view kKernelSuffix = "_[k]";

// "f (file.py:42)" -> f, file.py, 42; false when the label does not end that way.
bool SplitPythonLabel(std::string_view label, ProfileFrame* frame) {
  if (label.size() < 6 || label.back() != ')') return false;
  const size_t open = label.rfind(" (");
  const size_t colon = label.rfind(':');
  if (open == std::string_view::npos || open == 0 || colon == std::string_view::npos ||
      colon < open) {
    return false;
  }
  const std::string_view file = label.substr(open + 2, colon - open - 2);
  const std::string_view line = label.substr(colon + 1, label.size() - colon - 2);
  if (file.empty() || file.find_first_of("() ") != std::string_view::npos) return false;
  const std::optional<int64_t> n = ParseInt64(line);
  if (!n || *n < 0 || *n > (1 << 30)) return false;
  frame->kind = FrameKind::kPython;
  frame->function = std::string(label.substr(0, open));
  frame->file = std::string(file);
  frame->line = static_cast<int>(*n);
  return true;
}

}  // namespace

ProfileFrame FrameFromFoldedLabel(std::string_view label) {
  ProfileFrame frame;
  if (label == "[kernel]") {
    frame.kind = FrameKind::kKernel;
    frame.function = "[kernel]";
  } else if (label.size() > kKernelSuffix.size() && label.ends_with(kKernelSuffix)) {
    frame.kind = FrameKind::kKernel;
    frame.function = std::string(label.substr(0, label.size() - kKernelSuffix.size()));
  } else if (!SplitPythonLabel(label, &frame)) {
    frame.kind = FrameKind::kNative;
    frame.function = std::string(label);
  }
  return frame;
}

StatusOr<Profile> ParseFolded(std::string_view text, bool root_is_process,
                              const FoldedLimits& limits) {
  Profile profile;
  std::vector<int> ids;
  size_t line_no = 0, stacks = 0;
  uint64_t total = 0;
  auto bad = [&line_no](const std::string& why) {
    return InvalidArgumentError("folded stacks, line " + std::to_string(line_no) + ": " + why);
  };
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    for (char c : line) {
      if (static_cast<unsigned char>(c) < 0x20) return bad("control character");
    }
    const size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space == 0) return bad("want \"frame;frame;... COUNT\"");
    const std::optional<int64_t> count = ParseInt64(line.substr(space + 1));
    if (!count || *count <= 0 || static_cast<uint64_t>(*count) > limits.max_count) {
      return bad("count must be a whole number from 1 to " + std::to_string(limits.max_count));
    }
    if (++stacks > limits.max_stacks) {
      return bad("more than " + std::to_string(limits.max_stacks) + " stacks");
    }
    total += static_cast<uint64_t>(*count);
    if (total > limits.max_total) {
      return bad("more than " + std::to_string(limits.max_total) + " samples in all");
    }
    std::string_view stack = line.substr(0, space);
    ids.clear();
    while (true) {
      const size_t semi = stack.find(';');
      const std::string_view label = stack.substr(0, semi);
      if (label.empty()) return bad("empty frame");
      if (label.size() > limits.max_frame_bytes) {
        return bad("frame longer than " + std::to_string(limits.max_frame_bytes) + " bytes");
      }
      if (ids.size() >= limits.max_frames) {
        return bad("more than " + std::to_string(limits.max_frames) + " frames");
      }
      ProfileFrame frame = FrameFromFoldedLabel(label);
      if (root_is_process && ids.empty()) {
        frame = ProfileFrame();
        frame.kind = FrameKind::kProcess;
        frame.function = std::string(label);
      }
      ids.push_back(profile.Intern(frame));
      if (semi == std::string_view::npos) break;
      stack = stack.substr(semi + 1);
    }
    profile.Add(ids, static_cast<uint64_t>(*count));
  }
  return profile;
}

}  // namespace vigil
