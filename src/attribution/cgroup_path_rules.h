// SPDX-License-Identifier: Apache-2.0
// Pure parsing of cgroup membership: the lines of /proc/<pid>/cgroup (v1 and v2 forms) and the
// path -> job rules for SLURM, Kubernetes and systemd layouts. No file access, no state, so the
// job resolver and the cgroup collector share one definition of "which job is this cgroup".
// Every function is pure and thread-safe. Rules are documented with examples in
// docs/attribution.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// The cgroups of one process, from <proc>/<pid>/cgroup.
struct ProcCgroups {
  // Path in the v2 unified hierarchy ("0::/path" line); empty when there is no such line.
  std::string unified;
  bool has_unified = false;
  // v1 hierarchies: controller (or "name=systemd") -> path. A line "4:cpu,cpuacct:/x" gives
  // both "cpu" and "cpuacct".
  std::map<std::string, std::string> v1;
};

// Parses the text of /proc/<pid>/cgroup. Malformed lines are skipped.
ProcCgroups ParseProcCgroup(std::string_view text);

// The one path that identifies the process: the v2 unified path, unless it is the bare root "/"
// while a v1 hierarchy places the process deeper (hybrid hosts whose unified tree is unused);
// then the v1 cpu, cpuacct or name=systemd path, first one below the root. "" when nothing is
// known.
std::string PreferredCgroupPath(const ProcCgroups& cgroups);

// What a cgroup path alone says about a job.
struct CgroupJobMatch {
  std::string job_id;  // "" when the path names no job (e.g. a login session: user only).
  std::string user;    // From uid_N / user-N.slice, as the numeric uid; "" when unknown.
  std::string rule;    // "slurm_cgroup", "k8s_pod" or "systemd_unit".
  // Slurm 26.05+ without CgroupJobIdPaths=yes: the job's cgroup is named by its SLUID, job_id
  // is then "" and this holds the SLUID for the resolver to turn into a job id.
  std::string slurm_sluid = {};
  // Kubernetes: the container runtime's id from the container's cgroup ("" at pod level).
  std::string k8s_container_id = {};
};

// SLURM: /slurm/uid_1000/job_1234/step_0/task_0, /slurm_node7/uid_1000/job_1234/...,
// /system.slice/slurmstepd.scope/job_1234/step_0/user/task_0. job_id is "1234". Slurm 26.05+
// default: /system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_0 gives slurm_sluid
// "sEKNKTV3WPV500" and no job_id (the directory below the scope counts when a step_* follows or
// it has the SLUID's shape: 's' and 13 upper-case letters or digits).
std::optional<CgroupJobMatch> MatchSlurmCgroup(std::string_view path);
// Kubernetes: /kubepods/burstable/pod<uid>/<container>, /kubepods/pod<uid>/...,
// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/
// cri-containerd-<id>.scope. job_id is the pod UID with dashes; k8s_container_id the runtime's
// id from the segment below the pod (cri-containerd-, crio-, docker-, cri-dockerd- scopes, or a
// bare id with the cgroupfs driver).
std::optional<CgroupJobMatch> MatchKubernetesCgroup(std::string_view path);
// systemd: the innermost *.service or *.scope unit (/system.slice/foo.service -> "foo.service";
// /user.slice/user-1000.slice/user@1000.service/app.slice/bar.service -> "bar.service", user
// "1000"). Login sessions (session-N.scope) and init.scope give the user only, no job.
std::optional<CgroupJobMatch> MatchSystemdCgroup(std::string_view path);
// The three above, in that order.
std::optional<CgroupJobMatch> MatchCgroupPath(std::string_view path);

}  // namespace vigil
