// SPDX-License-Identifier: Apache-2.0
// What the daemon knows about the job a process belongs to, and which rule told it.
#pragma once

#include <string>

namespace vigil {

struct JobInfo {
  std::string job_id;     // "" when no rule matched.
  std::string user;       // Owner of the process (from its uid) unless a rule says otherwise.
  std::string team;       // Optional, from the mapping file or the environment allow-list.
  std::string model;      // The ML model (never hardware).
  std::string framework;  // "pytorch", "jax", ...
  std::string cgroup;     // The process's cgroup path (v2 unified path, or v1 cpu/cpuacct path).
  std::string rule;  // Which rule identified the job: "slurm_cgroup", "k8s_pod", "systemd_unit",
                     // "env", "ipc_registration", "mapping_file", "none".
  // Kubernetes identity (the labels k8s_namespace, k8s_pod, k8s_container): the names the
  // kubelet's pod-resources API gives; where only the cgroup path is known, k8s_pod is the pod
  // UID, k8s_container the runtime's container id and k8s_namespace "".
  std::string k8s_namespace = {};
  std::string k8s_pod = {};
  std::string k8s_container = {};
  std::string k8s_pod_uid = {};       // From the cgroup path (never a label of its own).
  std::string k8s_container_id = {};  // From the cgroup path.
  bool operator==(const JobInfo&) const = default;
};

}  // namespace vigil
