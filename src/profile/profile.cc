// SPDX-License-Identifier: Apache-2.0
#include "profile/profile.h"

#include <tuple>

namespace vigil {

bool ProfileFrame::operator<(const ProfileFrame& o) const {
  return std::tie(kind, function, module, file, line) <
         std::tie(o.kind, o.function, o.module, o.file, o.line);
}

bool ProfileFrame::operator==(const ProfileFrame& o) const {
  return std::tie(kind, function, module, file, line) ==
         std::tie(o.kind, o.function, o.module, o.file, o.line);
}

std::string FrameLabel(const ProfileFrame& frame) {
  switch (frame.kind) {
    case FrameKind::kKernel:  // An unnamed kernel address (no kallsyms) is just "[kernel]".
      return frame.function == "[kernel]" ? frame.function : frame.function + "_[k]";
    case FrameKind::kPython: {
      const size_t slash = frame.file.rfind('/');
      const std::string base =
          slash == std::string::npos ? frame.file : frame.file.substr(slash + 1);
      return frame.function + " (" + base + ":" + std::to_string(frame.line) + ")";
    }
    case FrameKind::kNative:
    case FrameKind::kProcess:
      break;
  }
  return frame.function;
}

int Profile::Intern(const ProfileFrame& frame) {
  auto [it, inserted] = ids_.emplace(frame, static_cast<int>(frames_.size()));
  if (inserted) {
    frames_.push_back(frame);
  }
  return it->second;
}

void Profile::Add(const std::vector<int>& frame_ids, uint64_t count) {
  stacks_[frame_ids] += count;
  total_ += count;
}

void MergeProfileUnder(const std::string& root, const Profile& from, Profile* into) {
  ProfileFrame frame;
  frame.kind = FrameKind::kProcess;
  frame.function = root;
  const int root_id = into->Intern(frame);
  for (const auto& [ids, count] : from.stacks()) {
    std::vector<int> stack = {root_id};
    for (int id : ids) stack.push_back(into->Intern(from.frames()[static_cast<size_t>(id)]));
    into->Add(stack, count);
  }
}

}  // namespace vigil
