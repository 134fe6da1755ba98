// SPDX-License-Identifier: Apache-2.0
#include "fleet_sim.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "collectors/gpu_metrics.h"

namespace vigil::bench {
namespace {

namespace gm = gpu_metrics;  // The metric names vigild emits.

using K = MetricKind;

constexpr MetricDesc kDaemon{"vigil_daemon_info", "", K::kGauge, ""};
constexpr MetricDesc kCollector{"vigil_collector_success", "", K::kGauge, ""};
constexpr std::array<MetricDesc, 4> kHostSeries = {{
    {"vigil_host_cpu_seconds_total", "", K::kCounter, "seconds"},
    {"vigil_host_disk_read_bytes_total", "", K::kCounter, "bytes"},
    {"vigil_host_disk_written_bytes_total", "", K::kCounter, "bytes"},
    {"vigil_host_context_switches_total", "", K::kCounter, ""},
}};

// Other GPU-level series vigild reports (docs/gpu.md), in the order they are added.
constexpr std::array<MetricDesc, 21> kGauges = {{
    {"vigil_gpu_utilization_ratio", "", K::kGauge, "ratio"},
    {"vigil_gpu_memory_used_bytes", "", K::kGauge, "bytes"},
    {"vigil_gpu_temperature_celsius", "", K::kGauge, "celsius"},
    {"vigil_gpu_power_watts", "", K::kGauge, "watts"},
    {"vigil_gpu_sm_clock_hertz", "", K::kGauge, "hertz"},
    {"vigil_gpu_memory_clock_hertz", "", K::kGauge, "hertz"},
    {"vigil_gpu_memory_utilization_ratio", "", K::kGauge, "ratio"},
    {"vigil_gpu_dram_active_ratio", "", K::kGauge, "ratio"},
    {"vigil_gpu_sm_occupancy_ratio", "", K::kGauge, "ratio"},
    {"vigil_gpu_pipe_active_ratio", "", K::kGauge, "ratio"},
    {"vigil_gpu_flops_estimated", "", K::kGauge, ""},
    {"vigil_gpu_flops_dense_peak_ratio", "", K::kGauge, "ratio"},
    {"vigil_gpu_memory_bandwidth_used_bytes_per_second", "", K::kGauge, "bytes_per_second"},
    {"vigil_gpu_pcie_transmit_bytes_per_second", "", K::kGauge, "bytes_per_second"},
    {"vigil_gpu_nvlink_transmit_bytes_per_second", "", K::kGauge, "bytes_per_second"},
    {"vigil_gpu_nvlink_transmit_bytes_total", "", K::kCounter, "bytes"},
    {"vigil_gpu_ecc_errors_total", "", K::kCounter, ""},
    {"vigil_gpu_xid_errors_total", "", K::kCounter, ""},
    {"vigil_gpu_memory_reserved_bytes", "", K::kGauge, "bytes"},
    {"vigil_gpu_mig_enabled", "", K::kGauge, ""},
    {"vigil_gpu_clock_event_reason_active", "", K::kGauge, ""},
}};

}  // namespace

FleetSim::FleetSim(FleetSimOptions options)
    : options_(std::move(options)),
      hosts_(static_cast<size_t>(options_.hosts)),
      rng_(options_.seed) {
  for (Host& h : hosts_) {
    h.gpu_energy_j.assign(static_cast<size_t>(options_.gpus), 0);
    // Hosts start at different points of their schedules.
    h.next_start = static_cast<int64_t>(rng_() % static_cast<uint64_t>(options_.job_ticks / 4 + 1));
  }
}

void FleetSim::Schedule(int host, Host& h, int64_t tick) {
  if (tick < h.job_end || tick < h.next_start) return;
  if (h.job_end >= 0 && tick == h.job_end) {
    // The job ended: the host idles for a while.
    h.job_id.clear();
    h.next_start =
        tick + static_cast<int64_t>(rng_() % static_cast<uint64_t>(options_.job_ticks / 4 + 1));
    h.job_end = -1;
    if (tick < h.next_start) return;
  }
  const uint64_t n = static_cast<uint64_t>(host) * 7919 + static_cast<uint64_t>(h.job_number++);
  h.job_id = HostName(host) + "-job-" + std::to_string(h.job_number);
  h.user = "user-" + std::to_string(n % 97);
  h.team = "team-" + std::to_string(n % 13);
  h.model = "model-" + std::to_string(n % 29);
  const int64_t mean = std::max(2, options_.job_ticks);
  h.job_end = tick + mean / 2 + static_cast<int64_t>(rng_() % static_cast<uint64_t>(mean));
  h.busy_share = 0.2 + 0.75 * static_cast<double>(rng_() % 1000) / 1000.0;
  const size_t g = static_cast<size_t>(options_.gpus);
  h.job_alloc_s.assign(g, 0);
  h.job_busy_s.assign(g, 0);
  h.job_held_s.assign(g, 0);
  h.job_energy_j.assign(g, 0);
}

void FleetSim::Report(int host, int64_t tick, std::vector<Sample>* out) {
  Host& h = hosts_[static_cast<size_t>(host)];
  Schedule(host, h, tick);
  const int64_t t = options_.t0_ns + tick * options_.interval_ns;
  const double dt = static_cast<double>(options_.interval_ns) / 1e9;
  const bool running = !h.job_id.empty();
  const std::string name = HostName(host);
  out->push_back({&kDaemon, {{"version", "0.1.0"}}, 1, t});
  out->push_back({&kCollector, {{"collector", "gpu"}}, 1, t});
  for (int i = 0; i < options_.host_series; ++i) {
    const MetricDesc& d = kHostSeries[static_cast<size_t>(i) % kHostSeries.size()];
    out->push_back({&d,
                    {{"index", std::to_string(i / static_cast<int>(kHostSeries.size()))}},
                    static_cast<double>(tick) * 1000 + i,
                    t});
  }
  for (int g = 0; g < options_.gpus; ++g) {
    const size_t gi = static_cast<size_t>(g);
    const std::string uuid = "GPU-" + name + "-" + std::to_string(g);
    const double jitter = static_cast<double>(rng_() % 100) / 1000.0;
    const double sm = running ? std::clamp(h.busy_share + jitter - 0.05, 0.0, 1.0) : 0.0;
    const double watts = 70 + 500 * sm;
    h.gpu_energy_j[gi] += watts * dt;
    Labels gpu = {{"gpu_model", "H100"}, {"gpu_uuid", uuid}};
    out->push_back({&gm::kUp, gpu, 1, t});
    out->push_back({&gm::kSmActive, gpu, sm, t});
    out->push_back({&gm::kEnergy, gpu, h.gpu_energy_j[gi], t});
    for (int i = 0; i + 3 < options_.series_per_gpu; ++i) {
      const MetricDesc& d = kGauges[static_cast<size_t>(i) % kGauges.size()];
      Labels l = gpu;
      if (i >= static_cast<int>(kGauges.size())) {
        l.emplace_back("index", std::to_string(i / static_cast<int>(kGauges.size())));
      }
      const double v =
          d.kind == K::kCounter ? static_cast<double>(tick) * (i + 1) : watts * (i + 1) + jitter;
      out->push_back({&d, std::move(l), v, t});
    }
    if (!running) continue;
    const double busy = sm * dt;
    h.job_alloc_s[gi] += dt;
    h.job_busy_s[gi] += busy;
    h.job_held_s[gi] += sm < 0.05 ? dt : 0;
    h.job_energy_j[gi] += watts * dt;
    const Labels job = {{"gpu_uuid", uuid}, {"job_id", h.job_id}, {"model", h.model},
                        {"rule", "slurm"},  {"team", h.team},     {"user", h.user}};
    out->push_back({&gm::kAllocated, job, h.job_alloc_s[gi], t});
    out->push_back({&gm::kBusy, job, h.job_busy_s[gi], t});
    out->push_back({&gm::kHeldIdle, job, h.job_held_s[gi], t});
    out->push_back({&gm::kJobEnergy, job, h.job_energy_j[gi], t});
  }
}

}  // namespace vigil::bench
