// SPDX-License-Identifier: Apache-2.0
// The data behind `vigil top` and how one frame is drawn. A frame is built from vigilStatus
// (header), vigilLatest (every series' newest value), vigilRange over the last minutes for the
// counters whose rates matter (CPU, pressure, cgroup and process CPU) and vigilProcesses.
// Series are found by name, with fallbacks, so a collector that is absent only hides its line:
//   CPU      rates of vigil_host_cpu_seconds_total{cpu="all",mode} as shares of their sum
//            (htop's split: user nice system irq softirq iowait steal), else
//            vigil_host_cpu_utilization_ratio{cpu="all"}
//   load     vigil_host_load1, vigil_host_load5, vigil_host_load15
//   memory   vigil_host_memory_{total,available,free}_bytes
//   PSI      vigil_host_pressure_waiting_ratio{resource}, else the rate of
//            vigil_host_pressure_waiting_seconds_total{resource}
//   cgroups  vigil_cgroup_cpu_usage_seconds_total{cgroup} (rate), vigil_cgroup_memory_usage_bytes
//   procs    vigilProcesses, with CPU (rate of vigil_process_cpu_{user,system}_seconds_total) and
//            RSS (vigil_process_resident_memory_bytes) of the process's (comm, job) group
//   GPUs     any vigil_gpu_* series, grouped by gpu_uuid (utilization, SM activity, memory,
//            power, die temperature (sensor="gpu"), estimated FLOP/s), then one row per
//            vigil_gpu_process_memory_used_bytes{pid}
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

// How process tables are ordered; chosen with a key in the live view or --sort.
enum class TopSort { kCpu, kMemory, kGpuMemory, kPid, kName };

struct TopLayout {
  int width = 0;  // Columns at most; 0 = no limit (and every column).
  TopSort sort = TopSort::kCpu;
  bool help = false;  // Draw the key help instead of the tables.
  bool keys = false;  // Draw the key line (live view only).
};

// The sort a key selects (c m g p n, as shown on screen), or false for another key.
bool TopSortForKey(int key, TopSort* sort);
// "cpu", "mem", "gpumem", "pid", "name": the --sort spellings, also shown on screen.
const char* TopSortName(TopSort sort);
bool ParseTopSort(const std::string& name, TopSort* sort);

// Whether a counter's rate is shown (its points are fetched with one vigilRange call per name).
bool TopNeedsRate(const std::string& name);

// Per-second rate from the newest two points of each series; series with fewer are left out.
std::map<std::string, double> RatesFromRange(const std::vector<SeriesView>& series);

// Fetches one frame. Only vigilLatest is required; the other calls degrade to empty sections.
StatusOr<TopData> FetchTop(const CliContext& ctx);

// Draws one frame. Plain text: the caller adds terminal escapes.
std::string RenderTop(const TopData& data, const TopLayout& layout);

}  // namespace vigil
