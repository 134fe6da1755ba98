// SPDX-License-Identifier: Apache-2.0
// Fuzzes the cgroup parsers and path rules (collectors/cgroup/cgroup_layout.h, cgroup_stats.h,
// cgroup_selection.h, attribution/cgroup_path_rules.h). Each input is read as every cgroup file
// at once: a /proc/<pid>/cgroup membership, a mount table and a mountinfo table (the layout they
// describe is then asked where the process's cgroups are), every line as a cgroup path for the
// SLURM, Kubernetes and systemd rules, and the flat-keyed, io.stat, blkio and memory-limit
// files. Invariants: a cgroup directory the layout returns lies beneath its hierarchy's mount
// (a membership path cannot climb out of /sys/fs/cgroup), and a job match has a rule.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "attribution/cgroup_path_rules.h"
#include "base/strings.h"
#include "collectors/cgroup/cgroup_layout.h"
#include "collectors/cgroup/cgroup_selection.h"
#include "collectors/cgroup/cgroup_stats.h"
#include "fuzz/fuzz_input.h"

namespace {

constexpr std::string_view kSysRoot = "/fuzz/sys";

// True when `path` is `dir` or below it, with no ".." component after it.
bool Beneath(const std::string& dir, const std::string& path) {
  if (path == dir) {
    return true;
  }
  if (!path.starts_with(dir) ||
      (path.size() > dir.size() && path[dir.size()] != '/' && !dir.ends_with("/"))) {
    return false;
  }
  for (std::string_view part : vigil::Split(std::string_view(path).substr(dir.size()), '/')) {
    if (part == "..") {
      return false;
    }
  }
  return true;
}

void CheckMatch(std::string_view path) {
  if (auto m = vigil::MatchCgroupPath(path)) {
    VIGIL_FUZZ_CHECK(!m->rule.empty());
  }
  [[maybe_unused]] auto slurm = vigil::MatchSlurmCgroup(path);
  [[maybe_unused]] auto k8s = vigil::MatchKubernetesCgroup(path);
  [[maybe_unused]] auto systemd = vigil::MatchSystemdCgroup(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string copy(reinterpret_cast<const char*>(data), size);
  const std::string_view text = copy;

  const vigil::ProcCgroups cgroups = vigil::ParseProcCgroup(text);
  const std::string preferred = vigil::PreferredCgroupPath(cgroups);
  CheckMatch(preferred);
  std::string_view rest = text;
  std::string_view line;
  for (int n = 0; n < 64 && vigil::NextLine(&rest, &line); ++n) {
    CheckMatch(line);
    [[maybe_unused]] std::string point = vigil::ResolveMountPoint(line, kSysRoot);
  }

  vigil::CgroupLayout layout = vigil::ParseCgroupMounts(text, kSysRoot);
  vigil::ParseCgroupMountRoots(text, kSysRoot, &layout);
  for (const std::string& path : vigil::CgroupPathsOfProcess(cgroups, layout)) {
    CheckMatch(path);
  }
  std::vector<std::string> dirs = {layout.unified};
  for (const auto& [controller, dir] : layout.v1) {
    dirs.push_back(dir);
    VIGIL_FUZZ_CHECK(layout.V1Root(controller) == dir);
  }
  for (const std::string& dir : dirs) {
    if (dir.empty()) {
      continue;
    }
    std::vector<std::string> paths = {preferred, cgroups.unified};
    for (const auto& [controller, path] : cgroups.v1) {
      paths.push_back(path);
    }
    for (const std::string& path : paths) {
      const std::string where = layout.Dir(dir, path);
      VIGIL_FUZZ_CHECK(where.empty() || Beneath(dir, where));
      [[maybe_unused]] std::string back = layout.HierarchyPath(dir, path);
    }
  }
  [[maybe_unused]] std::string_view kind = vigil::CgroupKindName(layout.kind);

  [[maybe_unused]] auto flat = vigil::ParseFlatKeyed(text);
  [[maybe_unused]] auto io = vigil::ParseIoStat(text);
  [[maybe_unused]] auto blkio = vigil::ParseBlkioServiceBytes(text);
  [[maybe_unused]] auto limit = vigil::ParseMemoryLimit(text);
  return 0;
}
