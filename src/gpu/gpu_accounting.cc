// SPDX-License-Identifier: Apache-2.0
#include "gpu/gpu_accounting.h"

namespace vigil {
namespace {

// Energy over an interval of `dt_s`: the counter's delta when both ends have it and it moved
// forward, else the trapezoid of the two power readings, else the latest power x dt.
double IntervalEnergy(double dt_s, const std::optional<double>& prev_counter,
                      const std::optional<double>& counter, const std::optional<double>& prev_power,
                      const std::optional<double>& power) {
  if (prev_counter && counter && *counter >= *prev_counter) return *counter - *prev_counter;
  if (prev_power && power) return (*prev_power + *power) / 2 * dt_s;
  if (power) return *power * dt_s;
  return 0;
}

}  // namespace

void GpuAccountant::Update(int64_t now_ns, const std::vector<GpuAccountingInput>& gpus) {
  for (const GpuAccountingInput& gpu : gpus) {
    auto [it, first] = gpus_.try_emplace(gpu.uuid);
    GpuState& state = it->second;
    if (first || now_ns <= state.last_ns) {
      state.last_ns = now_ns;
      state.last_counter_j = gpu.energy_counter_j;
      state.last_power_w = gpu.power_w;
      gpu_energy_.try_emplace(gpu.uuid, 0.0);
      continue;
    }
    const int64_t dt_ns = now_ns - state.last_ns;
    const double dt_s = static_cast<double>(dt_ns) / 1e9;
    const double energy = IntervalEnergy(dt_s, state.last_counter_j, gpu.energy_counter_j,
                                         state.last_power_w, gpu.power_w);
    gpu_energy_[gpu.uuid] += energy;
    if (gpu.processes_known && !gpu.jobs.empty()) {
      const int64_t n = static_cast<int64_t>(gpu.jobs.size());
      for (int64_t i = 0; i < n; ++i) {
        // Equal shares; the remainder nanoseconds go to the first job so the sum is exact.
        const int64_t share_ns = dt_ns / n + (i == 0 ? dt_ns % n : 0);
        const double share_s = static_cast<double>(share_ns) / 1e9;
        JobGpuUsage& usage = jobs_[{gpu.uuid, gpu.jobs[i]}];
        usage.allocated_ns += share_ns;
        usage.energy_j += energy / static_cast<double>(n);
        if (gpu.activity) {
          usage.busy_s += share_s * *gpu.activity;
          if (*gpu.activity < kIdleThreshold) usage.held_idle_s += share_s;
        }
      }
    }
    state.last_ns = now_ns;
    // Keep the last known counter across a missing reading so a later delta spans the gap.
    if (gpu.energy_counter_j) state.last_counter_j = gpu.energy_counter_j;
    state.last_power_w = gpu.power_w;
  }
}

}  // namespace vigil
