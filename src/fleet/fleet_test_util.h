// SPDX-License-Identifier: Apache-2.0
// Builders of pushed batches for the fleet tests and benchmark: one GPU's report at one tick, as
// vigild's GPU collector emits it (vigil_gpu_up, SM activity, device energy, and per job the four
// integrated counters). Owner: fleet. Test-only; value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleet/ingest_batch.h"

namespace vigil::fleet_test {

inline constexpr int64_t kSec = 1000000000;

struct JobCounters {
  std::string job_id, team = "team-a", model = "llama", user = "alice";
  double alloc_s = 0, busy_s = 0, held_idle_s = 0, energy_j = 0;
};

inline IngestSample S(std::string name, bool counter, Labels labels, double v, int64_t t) {
  SortLabels(&labels);
  return IngestSample{std::move(name), counter, std::move(labels), v, t};
}

// Appends one GPU's report at time t (counters are totals since the daemon started).
inline void AddGpuTick(std::vector<IngestSample>* out, const std::string& uuid, int64_t t,
                       double gpu_energy_j, double sm, const std::vector<JobCounters>& jobs,
                       const std::string& gpu_model = "H100") {
  const Labels gpu = {{"gpu_model", gpu_model}, {"gpu_uuid", uuid}};
  out->push_back(S("vigil_gpu_up", false, gpu, 1, t));
  out->push_back(S("vigil_gpu_sm_active_ratio", false, gpu, sm, t));
  out->push_back(S("vigil_gpu_energy_joules_total", true, gpu, gpu_energy_j, t));
  for (const JobCounters& j : jobs) {
    const Labels l = {{"gpu_uuid", uuid}, {"job_id", j.job_id}, {"model", j.model},
                      {"rule", "slurm"},  {"team", j.team},     {"user", j.user}};
    out->push_back(S("vigil_gpu_allocated_seconds_total", true, l, j.alloc_s, t));
    out->push_back(S("vigil_gpu_busy_seconds_total", true, l, j.busy_s, t));
    out->push_back(S("vigil_gpu_held_idle_seconds_total", true, l, j.held_idle_s, t));
    out->push_back(S("vigil_job_gpu_energy_joules_total", true, l, j.energy_j, t));
  }
}

inline IngestBatch MakeBatch(const std::string& host, const std::string& id, int64_t seq,
                             std::vector<IngestSample> samples) {
  return IngestBatch{host, id, seq, std::move(samples)};
}

}  // namespace vigil::fleet_test
