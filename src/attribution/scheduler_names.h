// SPDX-License-Identifier: Apache-2.0
// The names schedulers give jobs that their cgroup paths do not spell out: Kubernetes namespace,
// pod and container names (the kubelet's pod-resources API knows them by the devices a container
// holds, and what one GPU process teaches names every process of its pod), and Slurm job ids of
// SLUID-named cgroups (scontrol, or the job's own SLURM_JOB_ID). The job resolver owns one; it
// keeps the caches, the kubelet and scontrol clients and their health. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attribution/job_info.h"
#include "attribution/pod_device_map.h"
#include "attribution/slurm_job_lookup.h"

namespace vigil {

class SchedulerNames {
 public:
  // `kubelet.socket_path` "": no kubelet lookups. `kubelet_configured`: the operator named the
  // socket, so its absence is reported even before a pod is seen.
  SchedulerNames(PodDeviceMapOptions kubelet, bool kubelet_configured, SlurmJobLookupOptions slurm);

  // The job id of the SLUID-named Slurm cgroup `sluid` that `pid` (0: none) is in: what was
  // learnt or scontrol says, else the job's own SLURM_JOB_ID (`env_job_id`, read only then; the
  // cgroup vouches that the process is in a Slurm job, the environment says which number, and
  // the first process to say binds it), else the SLUID itself.
  std::string SlurmJobForSluid(const std::string& sluid, int pid,
                               const std::function<std::string()>& env_job_id);

  // Fills info->k8s_namespace/pod/container from info->k8s_pod_uid/container_id: the names
  // learnt for that pod, else the UID and container id themselves.
  void NamePod(JobInfo* info);
  // The kubelet's holder of one of `device_ids` names the process's pod and container (and is
  // remembered for its pod UID). `confirm`: a process first seen on this device.
  void NameFromDevice(const std::vector<std::string>& device_ids, bool confirm, JobInfo* info);

  std::vector<std::string> Degradations() const;

 private:
  struct PodName {
    std::string namespace_name, pod;
  };
  static constexpr size_t kMaxPods = 16384;

  std::unique_ptr<PodDeviceMap> devices_;  // Null when kubelet lookups are off.
  const bool kubelet_configured_;
  SlurmJobLookup slurm_;
  mutable std::mutex mu_;
  std::map<std::string, PodName> pods_;                                    // pod UID -> names.
  std::map<std::pair<std::string, std::string>, std::string> containers_;  // (UID, id) -> name.
  bool pods_seen_ = false;  // Some process ran in a Kubernetes pod.
};

}  // namespace vigil
