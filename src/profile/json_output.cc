// SPDX-License-Identifier: Apache-2.0
#include "profile/json_output.h"

#include <map>
#include <memory>

namespace vigil {

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kNative:
      return "native";
    case FrameKind::kKernel:
      return "kernel";
    case FrameKind::kPython:
      return "python";
    case FrameKind::kProcess:
      return "process";
  }
  return "native";
}

nlohmann::json ProfileToJson(const Profile& profile) {
  const ProfileInfo& info = profile.info();
  nlohmann::json out = {{"event", info.event},
                        {"frequency_hz", info.frequency_hz},
                        {"start_unix_ns", info.start_unix_ns},
                        {"duration_ns", info.duration_ns},
                        {"total_samples", profile.total_samples()},
                        {"lost_samples", info.lost_samples},
                        {"python_samples", info.python_samples},
                        {"gil_samples", info.gil_samples},
                        {"pids", info.pids}};
  nlohmann::json frames = nlohmann::json::array();
  for (const ProfileFrame& f : profile.frames()) {
    frames.push_back({{"name", f.function},
                      {"label", FrameLabel(f)},
                      {"kind", FrameKindName(f.kind)},
                      {"module", f.module},
                      {"file", f.file},
                      {"line", f.line}});
  }
  out["frames"] = std::move(frames);
  nlohmann::json stacks = nlohmann::json::array();
  for (const auto& [ids, count] : profile.stacks()) {
    stacks.push_back({{"frames", ids}, {"count", count}});
  }
  out["stacks"] = std::move(stacks);
  return out;
}

namespace {

struct Node {
  uint64_t value = 0;
  std::map<std::string, std::pair<int, std::unique_ptr<Node>>> children;  // label -> (id, node)
};

nlohmann::json NodeJson(int name, const Node& node) {
  nlohmann::json children = nlohmann::json::array();
  for (const auto& [label, child] : node.children) {
    children.push_back(NodeJson(child.first, *child.second));
  }
  return {{"n", name}, {"v", node.value}, {"c", std::move(children)}};
}

}  // namespace

nlohmann::json CallTreeJson(const Profile& profile) {
  // Frames with the same label merge in the tree (one box per function per path).
  std::map<std::string, int> name_ids;
  nlohmann::json names = nlohmann::json::array();
  nlohmann::json kinds = nlohmann::json::array();
  std::vector<int> frame_name(profile.frames().size());
  for (size_t i = 0; i < profile.frames().size(); ++i) {
    const ProfileFrame& f = profile.frames()[i];
    const std::string label = FrameLabel(f);
    auto [it, inserted] = name_ids.emplace(label, static_cast<int>(names.size()));
    if (inserted) {
      names.push_back(label);
      kinds.push_back(FrameKindName(f.kind));
    }
    frame_name[i] = it->second;
  }
  Node root;
  for (const auto& [ids, count] : profile.stacks()) {
    Node* node = &root;
    node->value += count;
    for (int id : ids) {
      const int name = frame_name[static_cast<size_t>(id)];
      auto& slot = node->children[names[static_cast<size_t>(name)].get<std::string>()];
      if (!slot.second) {
        slot = {name, std::make_unique<Node>()};
      }
      node = slot.second.get();
      node->value += count;
    }
  }
  return {{"names", std::move(names)},
          {"kinds", std::move(kinds)},
          {"total", profile.total_samples()},
          {"root", NodeJson(-1, root)}};
}

}  // namespace vigil
