// SPDX-License-Identifier: Apache-2.0
// Per-GPU, per-job accounting integrated over wall time between ticks (never by counting
// samples): allocated seconds (a process of the job held the GPU), busy seconds (allocated x SM
// activity, else x utilisation), held-idle seconds (allocated while activity was zero) and energy
// (device energy counter deltas, else power x time, split across the jobs holding the GPU).
// A reading describes the interval that ends at its tick. When several jobs share a GPU the
// interval and its energy are split equally, so per-job sums equal the device's. Allocated time is
// kept in integer nanoseconds so per-job sums add up to wall time exactly. Owner: gpu.
// Thread-compatible: the GPU collector's sequence owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/job_labels.h"

namespace vigil {

struct GpuAccountingInput {
  std::string uuid;
  bool processes_known = false;
  std::vector<JobLabels> jobs;             // Distinct jobs holding the GPU this tick.
  std::optional<double> activity;          // SM active, else utilisation (0-1).
  std::optional<double> energy_counter_j;  // Device energy counter.
  std::optional<double> power_w;
};

struct JobGpuUsage {
  int64_t allocated_ns = 0;
  double busy_s = 0;
  double held_idle_s = 0;
  double energy_j = 0;
  double allocated_s() const { return static_cast<double>(allocated_ns) / 1e9; }
};

class GpuAccountant {
 public:
  // Activity below this counts as idle (NVML reports whole percents).
  static constexpr double kIdleThreshold = 0.005;

  // Integrates the interval since the previous Update() (the first call only sets the baseline).
  void Update(int64_t monotonic_ns, const std::vector<GpuAccountingInput>& gpus);

  // Keyed by (gpu_uuid, job).
  const std::map<std::pair<std::string, JobLabels>, JobGpuUsage>& jobs() const { return jobs_; }
  // Device energy since the daemon started, per GPU uuid.
  const std::map<std::string, double>& gpu_energy_j() const { return gpu_energy_; }

 private:
  struct GpuState {
    int64_t last_ns = 0;
    std::optional<double> last_counter_j;
    std::optional<double> last_power_w;
  };
  std::map<std::string, GpuState> gpus_;
  std::map<std::pair<std::string, JobLabels>, JobGpuUsage> jobs_;
  std::map<std::string, double> gpu_energy_;
};

}  // namespace vigil
