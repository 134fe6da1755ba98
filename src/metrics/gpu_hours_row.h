// SPDX-License-Identifier: Apache-2.0
// One row of the GPU-hour attribution report, the same whether vigil-fleet computes it from its
// ledger or `vigil fleet report --prometheus` from PromQL: GPU-seconds in, GPU-hours out (docs/
// fleet.md for the columns). Owner: metrics. Pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vigil {

inline constexpr double kSecondsPerHour = 3600.0;

// Rounding noise below a nanosecond counts as zero.
inline double NonNegative(double v) { return v < 1e-9 ? 0.0 : v; }

// `wall_s`: GPU-seconds the GPUs existed; idle is what no job held of it.
inline nlohmann::json GpuHoursRow(const std::string& key, double wall_s, double alloc_s,
                                  double busy_s, double held_s, double energy_j, double price) {
  const double idle_s = NonNegative(wall_s - alloc_s);
  return {{"key", key},
          {"gpu_hours", (alloc_s + idle_s) / kSecondsPerHour},
          {"allocated_gpu_hours", alloc_s / kSecondsPerHour},
          {"busy_gpu_hours", busy_s / kSecondsPerHour},
          {"held_idle_gpu_hours", held_s / kSecondsPerHour},
          {"idle_gpu_hours", idle_s / kSecondsPerHour},
          {"energy_joules", energy_j},
          {"cost", (alloc_s + idle_s) / kSecondsPerHour * price}};
}

}  // namespace vigil
