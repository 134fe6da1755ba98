// SPDX-License-Identifier: Apache-2.0
#include "attribution/scheduler_names.h"

#include "base/file_util.h"

namespace vigil {

SchedulerNames::SchedulerNames(PodDeviceMapOptions kubelet, bool kubelet_configured,
                               SlurmJobLookupOptions slurm)
    : kubelet_configured_(kubelet_configured), slurm_(std::move(slurm)) {
  if (!kubelet.socket_path.empty()) {
    devices_ = std::make_unique<PodDeviceMap>(std::move(kubelet));
  }
}

std::string SchedulerNames::SlurmJobForSluid(const std::string& sluid, int pid,
                                             const std::function<std::string()>& env_job_id) {
  if (std::optional<std::string> job = slurm_.JobId(sluid, pid)) {
    return *job;
  }
  const std::string from_env = pid > 0 ? env_job_id() : std::string();
  if (!from_env.empty() && slurm_.Learn(sluid, from_env)) {
    return from_env;
  }
  return sluid;
}

void SchedulerNames::NamePod(JobInfo* info) {
  if (info->k8s_pod_uid.empty()) {
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  pods_seen_ = true;
  auto pod = pods_.find(info->k8s_pod_uid);
  if (pod != pods_.end()) {
    info->k8s_namespace = pod->second.namespace_name;
    info->k8s_pod = pod->second.pod;
  } else {
    info->k8s_namespace.clear();
    info->k8s_pod = info->k8s_pod_uid;
  }
  auto container = containers_.find({info->k8s_pod_uid, info->k8s_container_id});
  info->k8s_container = container != containers_.end() ? container->second : info->k8s_container_id;
}

void SchedulerNames::NameFromDevice(const std::vector<std::string>& device_ids, bool confirm,
                                    JobInfo* info) {
  NamePod(info);
  if (!devices_) {
    return;
  }
  if (info->k8s_pod_uid.empty() && !info->job_id.empty() && info->rule != "k8s_pod") {
    return;  // A Slurm or systemd job's process: a pod's device is not its business.
  }
  std::optional<PodDeviceOwner> owner = devices_->Lookup(device_ids, confirm);
  if (!owner) {
    return;
  }
  info->k8s_namespace = owner->namespace_name;
  info->k8s_pod = owner->pod;
  info->k8s_container = owner->container;
  if (info->k8s_pod_uid.empty()) {
    return;  // Named through the device alone (no pod cgroup visible): nothing to remember.
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (pods_.size() >= kMaxPods) {
    pods_.clear();  // Bounded memory; live pods are named again on their next GPU sample.
    containers_.clear();
  }
  pods_[info->k8s_pod_uid] = PodName{owner->namespace_name, owner->pod};
  if (!info->k8s_container_id.empty()) {
    containers_[{info->k8s_pod_uid, info->k8s_container_id}] = owner->container;
  }
}

std::vector<std::string> SchedulerNames::Degradations() const {
  std::vector<std::string> out;
  bool pods_seen = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pods_seen = pods_seen_;
  }
  if (devices_ && (pods_seen || kubelet_configured_)) {
    const PodDeviceMapHealth h = devices_->health();
    std::string problem = h.ok ? "" : h.message;
    if (problem.empty() && !h.ok && !PathExists(devices_->socket_path())) {
      problem = "no kubelet pod-resources socket at " + devices_->socket_path();
    }
    if (!problem.empty()) {
      out.push_back("kubernetes attribution: " + problem +
                    "; pods are named by UID and container id from cgroup paths");
    }
  } else if (!devices_ && pods_seen) {
    out.push_back(
        "kubernetes attribution: kubelet lookups are off; pods are named by UID and container "
        "id from cgroup paths");
  }
  const SlurmJobLookupHealth s = slurm_.health();
  if (s.used && !s.scontrol_ok && !s.message.empty()) {
    out.push_back("slurm attribution: " + s.message +
                  "; SLUID-named job cgroups resolved from SLURM_JOB_ID where the environment "
                  "allow-list has it, else named by their SLUID");
  }
  return out;
}

}  // namespace vigil
