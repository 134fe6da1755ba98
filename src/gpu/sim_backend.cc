// SPDX-License-Identifier: Apache-2.0
#include "gpu/sim_backend.h"

#include <cmath>
#include <cstdio>

namespace vigil {
namespace {

constexpr double kStepSeconds = 2.0;    // One training step.
constexpr double kLoadingShare = 0.25;  // Data-loading dip at the start of each step.
constexpr double kMemoryTotal = 80.0 * 1024 * 1024 * 1024;
constexpr double kJobMemory = 71.5 * 1024 * 1024 * 1024;

struct SimJob {
  JobLabels labels;
  int first_pid;
  double peak_tensor;  // HMMA activity while computing.
};

const SimJob kTrain{
    {"sim-train-1001", "alice", "llm", "llama-70b", "simulated", "pytorch"}, 3100001, 0.48};
const SimJob kFinetune{
    {"sim-ft-2002", "bob", "search", "bert-large", "simulated", "jax"}, 3200001, 0.38};
const SimJob kNotebook{
    {"sim-nb-3003", "carol", "research", "notebook", "simulated", "pytorch"}, 3300001, 0};

const SimJob& JobFor(int gpu) {
  if (gpu < 4) return kTrain;
  if (gpu < 7) return kFinetune;
  return kNotebook;
}

}  // namespace

SimBackend::SimBackend(int gpus, std::function<int64_t()> now_ns)
    : gpus_(gpus), now_ns_(std::move(now_ns)), start_ns_(now_ns_()) {}

Status SimBackend::Read(std::vector<GpuReading>* out) {
  const double t = static_cast<double>(now_ns_() - start_ns_) / 1e9;
  out->clear();
  for (int i = 0; i < gpus_; ++i) {
    const SimJob& job = JobFor(i % 8);
    const bool idle = job.peak_tensor == 0;
    const double phase = std::fmod(t + 0.05 * i, kStepSeconds) / kStepSeconds;
    const bool loading = phase < kLoadingShare;
    const double wobble = 0.03 * std::sin(t * 1.7 + i);
    const double compute = idle ? 0.0 : (loading ? 0.08 : 0.93 + wobble);
    GpuReading r;
    r.index = i;
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-5151a000-0000-4000-8000-%012d", i);
    r.uuid = uuid;
    r.name = "NVIDIA H100 80GB HBM3";
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + i * 0x10);
    r.pci_bus_id = bus;
    r.utilization_ratio = idle ? 0.0 : (loading ? 0.12 : 1.0);
    r.memory_utilization_ratio = compute * 0.45;
    r.memory_total_bytes = kMemoryTotal;
    r.memory_used_bytes = idle ? 2.1 * 1024 * 1024 * 1024 : kJobMemory;
    r.memory_free_bytes = kMemoryTotal - *r.memory_used_bytes;
    r.power_watts = 72 + compute * 560;
    r.energy_joules = 1e6 + (72 + 0.7 * 560) * t;  // Roughly the mean power since start.
    r.temperature_celsius = 34 + compute * 32;
    r.memory_temperature_celsius = 38 + compute * 28;
    r.sm_clock_hz = (idle ? 345 : 1980 - compute * 150) * 1e6;
    r.memory_clock_hz = 2619e6;
    r.clock_event_reasons = idle ? 0x1 : (compute > 0.9 ? 0x4 : 0);
    r.pcie_rx_bytes_per_second = loading ? 9.5e9 : 0.4e9;
    r.pcie_tx_bytes_per_second = 0.2e9;
    r.ecc_corrected_total = 0;
    r.ecc_uncorrected_total = 0;
    r.remapped_rows_correctable = 0;
    r.remapped_rows_uncorrectable = 0;
    r.row_remap_pending = false;
    r.row_remap_failure = false;
    r.mig_enabled = false;
    for (unsigned link = 0; link < 18; ++link) {
      const double bytes = idle ? 0 : 2.2e9 * t * (1 + 0.01 * link);
      r.nvlinks.push_back({link, true, bytes, bytes * 0.98});
    }
    GpuActivity& a = r.activity;
    a.sm_active = compute;
    a.sm_occupancy = compute * 0.41;
    a.hmma_active = compute * job.peak_tensor;
    a.tensor_active = *a.hmma_active;
    a.dfma_active = 0.0;
    a.imma_active = 0.0;
    a.fp32_active = compute * 0.06;
    a.fp64_active = 0.0;
    a.fp16_active = compute * 0.02;
    a.dram_active = compute * 0.52;
    r.processes_known = true;
    GpuProcess p;
    p.pid = job.first_pid + (i % 8);
    p.used_memory_bytes = static_cast<uint64_t>(*r.memory_used_bytes - 0.6e9);
    p.sm_ratio = compute;  // The GPU's only process: all of its SM activity.
    r.processes.push_back(p);
    r.simulated_jobs.push_back(job.labels);
    out->push_back(std::move(r));
  }
  return OkStatus();
}

std::string SimBackend::Describe() const {
  return "sim: " + std::to_string(gpus_) + " simulated H100 SXM GPU(s); every sample is simulated";
}

}  // namespace vigil
