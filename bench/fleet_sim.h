// SPDX-License-Identifier: Apache-2.0
// A simulated GPU fleet for the load generator (bench/fleet_loadgen.cc): `hosts` daemons with
// `gpus` GPUs each, reporting every `interval` what vigild's GPU collector reports (the metric
// names of docs/metrics.md): optionally `host_series` host-level series (vigil_host_*), per GPU the
// ledger's series (vigil_gpu_up, SM activity, device energy) plus gauges up to `series_per_gpu`,
// and while a job holds the host its four attributed counters per GPU. Jobs take a whole host for a
// random length around `job_ticks` reports, with idle gaps between them, so job series start and
// stop (churn) as on a real cluster. Deterministic for a seed. Owner: bench. Thread-compatible: one
// instance per thread, or serialised.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace vigil::bench {

struct FleetSimOptions {
  int hosts = 125;
  int gpus = 8;             // Per host.
  int series_per_gpu = 24;  // GPU-level series, at least 3 (the ledger's own).
  int host_series = 0;      // Host-level series (CPU, memory, disk: the ledger ignores them).
  int64_t interval_ns = 10LL * 1000000000;
  int64_t t0_ns = 0;    // Time of report 0.
  int job_ticks = 360;  // Mean job length in reports (an hour at 10 s).
  uint64_t seed = 1;
};

class FleetSim {
 public:
  explicit FleetSim(FleetSimOptions options);

  // Appends host h's report number `tick` (ticks must be asked in increasing order per host).
  void Report(int host, int64_t tick, std::vector<Sample>* out);
  std::string HostName(int host) const { return "sim-" + std::to_string(host); }
  const FleetSimOptions& options() const { return options_; }

 private:
  struct Host {
    int64_t job_number = 0;
    int64_t job_end = -1;  // Tick the current job ends (exclusive); idle until next_start.
    int64_t next_start = 0;
    double busy_share = 0;  // Of the allocated time, how much the GPUs compute.
    std::vector<double> gpu_energy_j;
    std::vector<double> job_alloc_s, job_busy_s, job_held_s, job_energy_j;
    std::string job_id, user, team, model;
  };
  void Schedule(int host, Host& h, int64_t tick);

  const FleetSimOptions options_;
  std::vector<Host> hosts_;
  std::mt19937_64 rng_;
};

}  // namespace vigil::bench
