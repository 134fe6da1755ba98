// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_selection.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr std::array<std::string_view, 8> kDefaultPatterns = {
    "/",
    "/*",
    "/slurm*/uid_*/job_*",
    "/system.slice/*slurmstepd.scope/job_*",
    "/kubepods/*/pod*",
    "/kubepods/pod*",
    "/kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice",
    "/kubepods.slice/kubepods-pod*.slice",
};

constexpr std::array<std::string_view, 4> kStatControllers = {"cpu", "cpuacct", "memory", "blkio"};

void AddUnique(std::vector<std::string>* out, std::string value) {
  if (!value.empty() && std::find(out->begin(), out->end(), value) == out->end()) {
    out->push_back(std::move(value));
  }
}

}  // namespace

std::span<const std::string_view> DefaultCgroupPatterns() { return kDefaultPatterns; }

std::vector<std::string> ExpandCgroupGlob(const std::string& root, std::string_view pattern,
                                          size_t limit) {
  std::vector<std::string_view> segments;
  for (std::string_view seg : Split(pattern, '/')) {
    if (!seg.empty()) {
      segments.push_back(seg);
    }
  }
  // Breadth-first over the segments: `level` holds the cgroup paths matched so far.
  std::vector<std::string> level = {"/"};
  for (std::string_view seg : segments) {
    std::vector<std::string> next;
    const std::string seg_str(seg);
    const bool literal = seg.find_first_of("*?[") == std::string_view::npos;
    for (const std::string& parent : level) {
      const std::string parent_dir = JoinPath(root, parent);
      auto child_path = [&parent](std::string_view name) {
        std::string path = parent;
        if (path != "/") {
          path += '/';
        }
        path += name;
        return path;
      };
      if (literal) {
        if (IsDirectory(JoinPath(parent_dir, seg))) {
          next.push_back(child_path(seg));
        }
        continue;
      }
      StatusOr<std::vector<std::string>> names = ListSubdirectories(parent_dir);
      if (!names.ok()) {
        continue;
      }
      std::sort(names->begin(), names->end());
      for (const std::string& name : *names) {
        if (fnmatch(seg_str.c_str(), name.c_str(), 0) == 0) {
          next.push_back(child_path(name));
        }
      }
    }
    level = std::move(next);
    if (level.empty()) {
      break;
    }
  }
  if (segments.empty() && !IsDirectory(root)) {
    level.clear();
  }
  std::sort(level.begin(), level.end());
  if (level.size() > limit) {
    level.resize(limit);
  }
  return level;
}

std::vector<std::string> StatRoots(const CgroupLayout& layout) {
  std::vector<std::string> out;
  if (layout.kind == CgroupLayout::Kind::kV2) {
    AddUnique(&out, layout.unified);
    return out;
  }
  for (std::string_view controller : kStatControllers) {
    AddUnique(&out, layout.V1Root(controller));
  }
  return out;
}

std::vector<std::string> CgroupPathsOfProcess(const ProcCgroups& cgroups,
                                              const CgroupLayout& layout) {
  std::vector<std::string> out;
  if (layout.kind == CgroupLayout::Kind::kV2) {
    if (cgroups.has_unified) {
      AddUnique(&out, cgroups.unified);
    }
    return out;
  }
  for (std::string_view controller : kStatControllers) {
    auto it = cgroups.v1.find(std::string(controller));
    if (it != cgroups.v1.end()) {
      AddUnique(&out, it->second);
    }
  }
  if (cgroups.has_unified && cgroups.unified != "/") {
    AddUnique(&out, cgroups.unified);
  }
  return out;
}

}  // namespace vigil
