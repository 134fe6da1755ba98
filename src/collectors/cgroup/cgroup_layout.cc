// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_layout.h"

#include <array>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr std::array<std::string_view, 14> kV1Controllers = {
    "cpu",      "cpuacct", "cpuset",     "memory",  "devices", "freezer", "net_cls",
    "net_prio", "blkio",   "perf_event", "hugetlb", "pids",    "rdma",    "misc"};

bool IsV1Controller(std::string_view option) {
  if (option.starts_with("name=")) {
    return true;
  }
  for (std::string_view c : kV1Controllers) {
    if (option == c) {
      return true;
    }
  }
  return false;
}

std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

std::string CgroupLayout::V1Root(std::string_view controller) const {
  auto it = v1.find(std::string(controller));
  return it == v1.end() ? std::string() : it->second;
}

std::string_view CgroupLayout::MountRoot(const std::string& dir) const {
  auto it = mount_roots.find(dir);
  return it == mount_roots.end() ? std::string_view("/") : std::string_view(it->second);
}

std::string CgroupLayout::Dir(const std::string& dir, std::string_view path) const {
  if (dir.empty()) return "";
  // The kernel shows a cgroup outside the reader's cgroup namespace as "/../.."; it is not below
  // this mount, and joining it would read files outside the hierarchy.
  for (std::string_view part : Split(path, '/')) {
    if (part == "..") return "";
  }
  const std::string_view root = MountRoot(dir);
  if (root == "/") return JoinPath(dir, path);
  if (path == root) return dir;
  if (path.starts_with(root) && path.size() > root.size() && path[root.size()] == '/') {
    return JoinPath(dir, path.substr(root.size()));
  }
  return "";
}

std::string CgroupLayout::HierarchyPath(const std::string& dir, std::string_view relative) const {
  const std::string_view root = MountRoot(dir);
  if (root == "/") return std::string(relative);
  return relative == "/" || relative.empty() ? std::string(root) : JoinPath(root, relative);
}

std::string_view CgroupKindName(CgroupLayout::Kind kind) {
  switch (kind) {
    case CgroupLayout::Kind::kV1:
      return "v1";
    case CgroupLayout::Kind::kV2:
      return "v2";
    case CgroupLayout::Kind::kHybrid:
      return "hybrid";
    case CgroupLayout::Kind::kNone:
      break;
  }
  return "none";
}

std::string ResolveMountPoint(std::string_view mount_point, std::string_view sys_root) {
  std::string point = Unescape(mount_point);
  std::string_view view(point);
  if (view == "/sys") {
    return std::string(sys_root);
  }
  if (view.starts_with("/sys/")) {
    return JoinPath(sys_root, view.substr(5));
  }
  return point;
}

CgroupLayout ParseCgroupMounts(std::string_view mounts, std::string_view sys_root) {
  CgroupLayout layout;
  std::string_view line;
  while (NextLine(&mounts, &line)) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() < 4) {
      continue;
    }
    if (f[2] == "cgroup2") {
      // The first cgroup2 mount is the hierarchy; later ones are bind mounts of it.
      if (layout.unified.empty()) {
        layout.unified = ResolveMountPoint(f[1], sys_root);
      }
      continue;
    }
    if (f[2] != "cgroup") {
      continue;
    }
    const std::string dir = ResolveMountPoint(f[1], sys_root);
    for (std::string_view option : Split(f[3], ',')) {
      if (IsV1Controller(option)) {
        layout.v1.emplace(std::string(option), dir);
      }
    }
  }
  const bool v1 = !layout.v1.empty();
  const bool v2 = !layout.unified.empty();
  layout.kind = v1 && v2 ? CgroupLayout::Kind::kHybrid
                : v1     ? CgroupLayout::Kind::kV1
                : v2     ? CgroupLayout::Kind::kV2
                         : CgroupLayout::Kind::kNone;
  return layout;
}

void ParseCgroupMountRoots(std::string_view mountinfo, std::string_view sys_root,
                           CgroupLayout* layout) {
  // "ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS"
  std::string_view line;
  while (NextLine(&mountinfo, &line)) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5 || dash + 1 >= f.size()) continue;
    if (f[dash + 1] != "cgroup" && f[dash + 1] != "cgroup2") continue;
    std::string root = Unescape(f[3]);
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (root.empty() || root == "/") continue;
    layout->mount_roots.emplace(ResolveMountPoint(f[4], sys_root), std::move(root));
  }
}

StatusOr<CgroupLayout> DetectCgroupLayout(const HostPaths& paths) {
  std::string table = "self";
  StatusOr<std::string> text = ReadSmallFile(paths.Proc("self/mounts"));
  if (!text.ok()) {
    table = "1";
    text = ReadSmallFile(paths.Proc("1/mounts"));
  }
  if (!text.ok()) {
    return text.status();
  }
  CgroupLayout layout = ParseCgroupMounts(*text, paths.sys_root);
  if (layout.kind == CgroupLayout::Kind::kNone) {
    return NotFoundError("no cgroup filesystem in " + paths.Proc("self/mounts"));
  }
  if (StatusOr<std::string> info = ReadSmallFile(paths.Proc(table + "/mountinfo"), 4 << 20);
      info.ok()) {
    ParseCgroupMountRoots(*info, paths.sys_root, &layout);
  }
  return layout;
}

}  // namespace vigil
