// SPDX-License-Identifier: Apache-2.0
// The data behind `vigil top` and how one frame is drawn. A frame is built from vigilStatus
// (header), vigilLatest (every series' newest value), vigilRange over the last minutes for the
// counters whose rates matter (CPU, pressure, cgroup CPU) and vigilProcesses. Series are found
// by name, with fallbacks, so a collector that is absent only hides its line:
//   CPU      vigil_host_cpu_utilization_ratio{cpu="all"}, modes from the rate of
//            vigil_host_cpu_seconds_total{cpu="all",mode}
//   load     vigil_host_load1, vigil_host_load5, vigil_host_load15
//   memory   vigil_host_memory_{total,available,free}_bytes
//   PSI      vigil_host_pressure_waiting_ratio{resource}, else the rate of
//            vigil_host_pressure_waiting_seconds_total{resource}
//   cgroups  vigil_cgroup_cpu_usage_seconds_total{cgroup} (rate), vigil_cgroup_memory_usage_bytes
//   GPUs     any vigil_gpu_* series, grouped by gpu_uuid (utilization, SM activity, memory,
//            power, temperature, estimated FLOP/s)
// Pure data and functions; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_context.h"
#include "cli/reply.h"

namespace vigil {

struct TopData {
  nlohmann::json status;                // vigilStatus reply, or null.
  std::vector<SeriesView> latest;       // vigilLatest with an empty selector.
  std::map<std::string, double> rates;  // SeriesView::Key() of a counter -> per-second rate.
  nlohmann::json processes;             // vigilProcesses reply, or null.
  int64_t time_ns = 0;                  // When the frame was fetched.
};

// Whether a counter's rate is shown (its points are fetched with one vigilRange call per name).
bool TopNeedsRate(const std::string& name);

// Per-second rate from the newest two points of each series; series with fewer are left out.
std::map<std::string, double> RatesFromRange(const std::vector<SeriesView>& series);

// Fetches one frame. Only vigilLatest is required; the other calls degrade to empty sections.
StatusOr<TopData> FetchTop(const CliContext& ctx);

// Draws one frame, `width` columns wide at most (0 = no limit). Plain text: the caller adds
// terminal escapes.
std::string RenderTop(const TopData& data, int width);

}  // namespace vigil
