// SPDX-License-Identifier: Apache-2.0
#include "attribution/cgroup_path_rules.h"

#include <algorithm>
#include <vector>

#include "base/strings.h"

namespace vigil {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> PathSegments(std::string_view path) {
  std::vector<std::string_view> out;
  for (std::string_view seg : Split(path, '/')) {
    if (!seg.empty()) {
      out.push_back(seg);
    }
  }
  return out;
}

// "uid_1000" -> "1000"; "" when `seg` is not of that form.
std::string_view SuffixNumber(std::string_view seg, std::string_view prefix) {
  if (!seg.starts_with(prefix)) {
    return {};
  }
  std::string_view rest = seg.substr(prefix.size());
  return AllDigits(rest) ? rest : std::string_view();
}

bool IsHexOrDash(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-' ||
           c == '_';
  });
}

// Finds the pod UID in one segment: "pod<uid>" (cgroupfs driver) or "...-pod<uid>.slice"
// (systemd driver, dashes of the UID written as underscores). Returns the UID with dashes.
std::optional<std::string> PodUidFromSegment(std::string_view seg) {
  std::string_view uid;
  if (seg.starts_with("pod")) {
    uid = seg.substr(3);
  } else if (seg.starts_with("kubepods") && seg.ends_with(".slice")) {
    size_t pos = seg.rfind("-pod");
    if (pos == std::string_view::npos) {
      return std::nullopt;
    }
    uid = seg.substr(pos + 4, seg.size() - pos - 4 - 6);
  } else {
    return std::nullopt;
  }
  if (uid.size() < 8 || !IsHexOrDash(uid)) {
    return std::nullopt;
  }
  std::string out(uid);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// The container id in the segment below a pod's: "cri-containerd-<id>.scope", "crio-<id>.scope",
// "docker-<id>.scope", "cri-dockerd-<id>.scope" (systemd driver) or "<id>" (cgroupfs). "" for
// anything else (CRI-O's "crio-conmon-<id>.scope" is its monitor, not the container).
std::string ContainerIdFromSegment(std::string_view seg) {
  static constexpr std::string_view kPrefixes[] = {"cri-containerd-", "crio-", "cri-dockerd-",
                                                   "docker-", "containerd-"};
  std::string_view id = seg;
  if (id.ends_with(".scope")) {
    id.remove_suffix(6);
    bool known = false;
    for (std::string_view prefix : kPrefixes) {
      if (id.starts_with(prefix)) {
        id.remove_prefix(prefix.size());
        known = true;
        break;
      }
    }
    if (!known) {
      return "";
    }
  }
  return id.size() >= 12 && id.size() <= 128 && IsHex(id) ? std::string(id) : std::string();
}

// The shape of a Slurm SLUID as 26.05 writes it: 's' and 13 characters of Crockford base32
// (upper-case letters and digits), e.g. "sEKNKTV3WPV500".
bool LooksLikeSluid(std::string_view s) {
  return s.size() == 14 && s[0] == 's' && std::all_of(s.begin() + 1, s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
         });
}

// A directory directly below a slurmstepd scope that names a job by an opaque id.
bool IsOpaqueSlurmJobDir(const std::vector<std::string_view>& segs, size_t i) {
  std::string_view seg = segs[i];
  if (seg == "system" || seg.starts_with("job_") || seg.starts_with("step_") || seg.size() > 64) {
    return false;  // "system" holds slurmstepd's own processes.
  }
  const bool step_follows = i + 1 < segs.size() && segs[i + 1].starts_with("step_");
  return step_follows || LooksLikeSluid(seg);
}

}  // namespace

ProcCgroups ParseProcCgroup(std::string_view text) {
  ProcCgroups out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    // hierarchy-ID:controller-list:path; the path itself may contain ':'.
    size_t first = line.find(':');
    if (first == std::string_view::npos) {
      continue;
    }
    size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) {
      continue;
    }
    std::string_view id = line.substr(0, first);
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    if (path.empty() || !AllDigits(id)) {
      continue;
    }
    if (id == "0" && controllers.empty()) {
      out.unified = std::string(path);
      out.has_unified = true;
      continue;
    }
    for (std::string_view controller : Split(controllers, ',')) {
      if (!controller.empty()) {
        out.v1[std::string(controller)] = std::string(path);
      }
    }
  }
  return out;
}

std::string PreferredCgroupPath(const ProcCgroups& cgroups) {
  static constexpr std::string_view kV1Order[] = {"cpu", "cpuacct", "name=systemd"};
  if (cgroups.has_unified && (cgroups.unified != "/" || cgroups.v1.empty())) {
    return cgroups.unified;
  }
  std::string fallback = cgroups.has_unified ? cgroups.unified : std::string();
  for (std::string_view controller : kV1Order) {
    auto it = cgroups.v1.find(std::string(controller));
    if (it == cgroups.v1.end()) {
      continue;
    }
    if (it->second != "/") {
      return it->second;
    }
    if (fallback.empty()) {
      fallback = it->second;
    }
  }
  return fallback;
}

std::optional<CgroupJobMatch> MatchSlurmCgroup(std::string_view path) {
  std::vector<std::string_view> segs = PathSegments(path);
  for (size_t i = 0; i < segs.size(); ++i) {
    std::string_view job = SuffixNumber(segs[i], "job_");
    if (job.empty()) {
      continue;
    }
    // v1: .../slurm[_node]/uid_N/job_M; v2: .../slurmstepd.scope/job_M.
    if (i >= 2 && (segs[i - 2] == "slurm" || segs[i - 2].starts_with("slurm_"))) {
      std::string_view uid = SuffixNumber(segs[i - 1], "uid_");
      if (!uid.empty()) {
        return CgroupJobMatch{std::string(job), std::string(uid), "slurm_cgroup"};
      }
    }
    if (i >= 1 && segs[i - 1].find("slurmstepd") != std::string_view::npos &&
        segs[i - 1].ends_with(".scope")) {
      return CgroupJobMatch{std::string(job), "", "slurm_cgroup"};
    }
  }
  for (size_t i = 1; i < segs.size(); ++i) {
    if (segs[i - 1].find("slurmstepd") != std::string_view::npos &&
        segs[i - 1].ends_with(".scope") && IsOpaqueSlurmJobDir(segs, i)) {
      CgroupJobMatch match{"", "", "slurm_cgroup"};
      match.slurm_sluid = std::string(segs[i]);
      return match;
    }
  }
  return std::nullopt;
}

std::optional<CgroupJobMatch> MatchKubernetesCgroup(std::string_view path) {
  std::vector<std::string_view> segs = PathSegments(path);
  bool under_kubepods = false;
  for (size_t i = 0; i < segs.size(); ++i) {
    std::string_view seg = segs[i];
    if (seg == "kubepods" || seg.starts_with("kubepods-") || seg == "kubepods.slice") {
      under_kubepods = true;
    }
    if (!under_kubepods) {
      continue;
    }
    if (auto uid = PodUidFromSegment(seg)) {
      CgroupJobMatch match{*uid, "", "k8s_pod"};
      if (i + 1 < segs.size()) {
        match.k8s_container_id = ContainerIdFromSegment(segs[i + 1]);
      }
      return match;
    }
  }
  return std::nullopt;
}

std::optional<CgroupJobMatch> MatchSystemdCgroup(std::string_view path) {
  std::vector<std::string_view> segs = PathSegments(path);
  CgroupJobMatch match;
  match.rule = "systemd_unit";
  bool any = false;
  for (std::string_view seg : segs) {
    std::string_view uid =
        SuffixNumber(seg.substr(0, seg.size() - std::min<size_t>(6, seg.size())), "user-");
    if (seg.ends_with(".slice") && !uid.empty()) {
      match.user = std::string(uid);
      any = true;
      continue;
    }
    const bool service = seg.ends_with(".service");
    const bool scope = seg.ends_with(".scope");
    if (!service && !scope) {
      continue;
    }
    if (seg == "init.scope" || (scope && seg.starts_with("session-"))) {
      match.job_id.clear();
      any = true;
      continue;
    }
    if (seg.starts_with("user@") && service) {
      continue;  // The per-user manager; the unit below it (if any) is the job.
    }
    match.job_id = std::string(seg);
    any = true;
  }
  if (!any) {
    return std::nullopt;
  }
  return match;
}

std::optional<CgroupJobMatch> MatchCgroupPath(std::string_view path) {
  if (auto m = MatchSlurmCgroup(path)) {
    return m;
  }
  if (auto m = MatchKubernetesCgroup(path)) {
    return m;
  }
  return MatchSystemdCgroup(path);
}

}  // namespace vigil
