// SPDX-License-Identifier: Apache-2.0
// The attribution labels a per-process series carries: job_id, user, team, model and framework
// of the job the process resolves to, and k8s_namespace, k8s_pod, k8s_container for a process in
// a Kubernetes pod, each only when known. One definition, so every collector
// that groups processes by job labels them alike.
#pragma once

#include "attribution/job_info.h"
#include "metrics/metric.h"

namespace vigil {

inline void AppendJobLabels(const JobInfo& job, Labels* labels) {
  const std::pair<const char*, const std::string*> job_labels[] = {
      {"job_id", &job.job_id},       {"user", &job.user},
      {"team", &job.team},           {"model", &job.model},
      {"framework", &job.framework}, {"k8s_namespace", &job.k8s_namespace},
      {"k8s_pod", &job.k8s_pod},     {"k8s_container", &job.k8s_container}};
  for (const auto& [name, value] : job_labels) {
    if (!value->empty()) labels->emplace_back(name, *value);
  }
}

}  // namespace vigil
