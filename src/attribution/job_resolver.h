// SPDX-License-Identifier: Apache-2.0
// pid -> job resolution. Reads <proc>/<pid>/cgroup (SLURM job_N and SLUID paths, Kubernetes pod
// UIDs and container ids, systemd units), <proc>/<pid>/status (uid -> user), and, only for
// variables on an opt-in allow-list, <proc>/<pid>/environ; then applies the configured mapping file
// (job or cgroup pattern -> team/model/framework). What a process claims about itself (IPC
// registration, its environment) never outranks the scheduler: a cgroup that names a job decides,
// and a claim may not name a job the scheduler gives other processes of this host. Results are
// cached per (pid, start time) so a reused pid is never attributed to the old job. Thread-safe: any
// thread may call Resolve(). Kubernetes names (namespace, pod, container) come from the kubelet's
// pod-resources API through the devices a process uses (ResolveOnDevice); Slurm SLUID-named
// cgroups are turned into job ids through scontrol or SLURM_JOB_ID.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "attribution/job_info.h"
#include "attribution/pod_device_map.h"
#include "attribution/slurm_job_lookup.h"
#include "base/status.h"

namespace vigil {

struct JobResolverOptions {
  std::string proc_root = "/proc";
  // Environment variables that may be read from /proc/<pid>/environ, e.g. SLURM_JOB_ID,
  // TORCHELASTIC_RUN_ID, VIGIL_TEAM. Empty: environments are never read.
  std::vector<std::string> env_allow_list;
  // Optional TOML mapping file (format in docs/attribution.md).
  std::string mapping_file;
  // The kubelet's pod-resources socket and its cache schedule; socket_path "" turns the kubelet
  // lookups off (pods are then named by their cgroup path alone).
  PodDeviceMapOptions kubelet = {};
  // Whether kubelet.socket_path was set by the operator: its absence is then worth a word in
  // `vigil status` even before any pod is seen.
  bool kubelet_configured = false;
  // scontrol for SLUID-named Slurm cgroups.
  SlurmJobLookupOptions slurm = {};
};

class JobResolver {
 public:
  explicit JobResolver(JobResolverOptions options);
  ~JobResolver();
  JobResolver(const JobResolver&) = delete;
  JobResolver& operator=(const JobResolver&) = delete;

  // Loads (or reloads) the mapping file; an error leaves the previous mapping in place.
  Status LoadMapping();
  // NotFound when the process is gone. A process no rule identifies gets rule "none".
  StatusOr<JobInfo> Resolve(int pid);
  // Records a job claimed over IPC (Kineto or libvigil_client registration) for that pid and its
  // descendants. The claim is the process's own, unverified word: where the process's cgroup
  // names a job (SLURM, Kubernetes, systemd) that job stands, and the claim's team, model and
  // framework are kept only if it names the same job; elsewhere it names the job (rule
  // "ipc_registration") unless a cgroup gives that job id to other processes of this host.
  // info.user is ignored: the user always comes from the uid.
  void RecordRegistration(int pid, const JobInfo& info);
  // RecordRegistration, then what pid resolves to with the claim. A process that cannot be read
  // gets the claim judged alone (no cgroup known): what the IPC side stores for it.
  JobInfo SettleClaim(int pid, const JobInfo& claim);
  // Resolve, plus the Kubernetes names of the pod and container the kubelet says hold one of
  // `device_ids` (a GPU's UUID and index). What it learns names the pod's other processes too.
  StatusOr<JobInfo> ResolveOnDevice(int pid, const std::vector<std::string>& device_ids);
  // Drops cache entries of processes that no longer exist.
  void Prune();
  // What attribution cannot do right now (a missing or failing kubelet socket where pods run,
  // scontrol missing where Slurm names cgroups by SLUID), one line each, for `vigil status`.
  std::vector<std::string> Degradations() const;

  // What a cgroup path alone says (SLURM, Kubernetes and systemd rules, then the mapping file's
  // cgroup rules): for cgroups that are not one process's. `user` comes from a uid in the path.
  // rule "none" when nothing matched. Never fails.
  JobInfo ResolveCgroup(const std::string& cgroup_path);
  // Distinct jobs among cached resolutions (those with a job id), for collectors that report
  // per-job cgroups.
  std::vector<JobInfo> CachedJobs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
