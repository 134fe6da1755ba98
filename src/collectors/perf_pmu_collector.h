// SPDX-License-Identifier: Apache-2.0
// perf_pmu: CPU performance counters (instructions, cycles and IPC, cache, TLB and branch misses,
// DRAM traffic from the uncore memory controllers) and the kernel's software events (task clock,
// context switches, CPU migrations, page faults), per CPU, for the whole host and per cgroup of
// interest. The perf_event machinery is profile/pmu_counters.h; this file names the metrics.
// Events are opened on the first Collect() and kept open. A host without a hardware PMU (most
// VMs) counts the software events and says so: Collect() then returns NotFound with the samples
// written, so `vigil status` shows the collector's reduced state. Owned by the daemon's
// collection sequence.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "profile/pmu_counters.h"
#include "profile/pmu_events.h"

namespace vigil {

class PerfPmuCollector : public Collector {
 public:
  static const CollectorInfo kInfo;
  static constexpr std::string_view kDefaultEvents = "default,software";

  struct Options {
    HostPaths paths;
    std::string events{kDefaultEvents};  // Presets and event names (profile/pmu_events.h).
    std::vector<std::string> cgroups;    // Counted separately; paths below the hierarchy root.
    PerfEventSys* sys = nullptr;         // Null: the kernel's.
  };
  explicit PerfPmuCollector(Options options);
  Status Collect(MetricWriter& out) override;

  // After the first Collect(): what is counted (empty before, or when setup failed).
  const PmuCounters* counters() const { return counters_.get(); }

 private:
  // Where one event's counts go: family, fixed labels, divisor (task clock ns -> s).
  struct EventMetric {
    const MetricDesc* desc = nullptr;
    Labels labels;
    double divisor = 1;
    int uncore_series = -1;  // Uncore events: index of the host-wide series they add to.
  };
  // Per event and CPU (or cgroup): this tick's sums.
  struct Acc {
    double total = 0;
    double delta = 0;
    uint64_t enabled_ns = 0;
    uint64_t running_ns = 0;
    bool read = false;
  };

  Status Setup();
  void Write(MetricWriter& out);

  Options options_;
  Status config_error_;  // A bad event list: reported every tick, not retried.
  PmuHost pmu_host_;
  std::unique_ptr<PmuCounters> counters_;
  std::vector<std::string> reduced_;  // Why some configured events are not counted here.
  std::vector<std::string> cgroup_labels_;
  std::vector<EventMetric> metrics_;  // Parallel to counters_->events().
  size_t uncore_series_ = 0;
  std::vector<int> cpu_slot_;  // CPU number -> index into the per-CPU accumulators.
  std::vector<int> cpus_;      // Index -> CPU number.
  int instructions_ = -1;      // Event indexes of instructions and cycles, for IPC.
  int cycles_ = -1;
  // Reused every tick: [event][cpu slot], [event][cgroup], [event] summed, [uncore series].
  std::vector<std::vector<Acc>> per_cpu_;
  std::vector<std::vector<Acc>> per_cgroup_;
  std::vector<Acc> host_;
  std::vector<double> uncore_;
};

}  // namespace vigil
