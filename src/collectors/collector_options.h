// SPDX-License-Identifier: Apache-2.0
// Everything a collector may be given at construction. The daemon builds one from its config;
// tests build one pointing at fixture trees. Shared services are borrowed and may be null.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attribution/job_resolver.h"
#include "collectors/collector.h"
#include "collectors/watch_list.h"

namespace vigil {

struct CollectorOptions {
  HostPaths paths;
  // Extended regexes matched against a process's comm and command line ("pattern" reason).
  std::vector<std::string> process_patterns;
  // Cgroups of interest, as path globs relative to the hierarchy root ("/slurm/uid_*/job_*").
  // Empty: cgroups of watched processes plus the top-level slices/jobs.
  std::vector<std::string> cgroup_patterns;
  std::shared_ptr<WatchList> watch_list;  // May be null.
  std::shared_ptr<JobResolver> resolver;  // May be null: no job labels then.
  // GPU settings (src/gpu): backend name, library override; ignored by host collectors.
  std::string gpu_backend = "auto";
  std::string nvml_library;
  std::string dcgm_address = "127.0.0.1:5555";  // nv-hostengine to connect to first.
  bool dcgm_embedded = false;  // Start an embedded DCGM engine when no host engine answers.
  // perf_pmu: presets and event names (profile/pmu_events.h), and cgroups counted separately.
  std::string pmu_events = "default,software";
  std::vector<std::string> pmu_cgroups;
};

}  // namespace vigil
