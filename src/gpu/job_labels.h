// SPDX-License-Identifier: Apache-2.0
// The job labels GPU accounting is keyed by. The collector fills them from the attribution
// resolver (gpu may not include attribution); the simulated backend supplies its own. Value type.
#pragma once

#include <string>
#include <tuple>

namespace vigil {

struct JobLabels {
  std::string job_id, user, team, model;
  std::string rule;  // How the job was identified (the resolver's rule, "unresolved", "simulated").
  std::string framework;  // "pytorch", "jax", ... ("" when unknown). Last, so {id, user, team,
                          // model, rule} initialisers keep their meaning.
  // The Kubernetes pod of the process holding the GPU ("" outside Kubernetes).
  std::string k8s_namespace = {}, k8s_pod = {}, k8s_container = {};
  auto Tie() const {
    return std::tie(job_id, user, team, model, framework, rule, k8s_namespace, k8s_pod,
                    k8s_container);
  }
  bool operator<(const JobLabels& o) const { return Tie() < o.Tie(); }
  bool operator==(const JobLabels& o) const { return Tie() == o.Tie(); }
};

}  // namespace vigil
