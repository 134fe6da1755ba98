// SPDX-License-Identifier: Apache-2.0
// What a GPU backend reports for one device at one tick, vendor-neutral. Every field a backend
// could not read stays empty (std::nullopt), so "not measured" is never confused with zero.
// Ratios are 0-1, rates per second, sizes in bytes, energy in joules. Owner: gpu. Value types.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/job_labels.h"
#include "gpu/process_list.h"

namespace vigil {

// Profiling-counter activities (GPM, DCGM fields 1002-1008, 1013-1015), each 0-1.
struct GpuActivity {
  std::optional<double> sm_active;      // GPM 2 / DCGM 1002
  std::optional<double> sm_occupancy;   // GPM 3 / DCGM 1003
  std::optional<double> tensor_active;  // any tensor pipe: GPM 5 / DCGM 1004
  std::optional<double> dram_active;    // GPM 10 / DCGM 1005
  std::optional<double> fp64_active;    // GPM 11 / DCGM 1006
  std::optional<double> fp32_active;    // GPM 12 / DCGM 1007
  std::optional<double> fp16_active;    // non-tensor FP16: GPM 13 / DCGM 1008
  std::optional<double> hmma_active;    // FP16/BF16/TF32/FP8 tensor: GPM 7 / DCGM 1014
  std::optional<double> imma_active;    // integer tensor: GPM 9 / DCGM 1013
  std::optional<double> dfma_active;    // FP64 tensor: GPM 6 / DCGM 1015
  bool any() const {
    return sm_active || sm_occupancy || tensor_active || dram_active || fp64_active ||
           fp32_active || fp16_active || hmma_active || imma_active || dfma_active;
  }
};

struct NvLinkReading {
  unsigned link = 0;
  bool active = false;
  std::optional<double> tx_bytes_total;  // Counter since driver load.
  std::optional<double> rx_bytes_total;
};

struct MigInstance {
  std::string uuid;
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
};

struct GpuReading {
  int index = 0;
  std::string uuid;  // The join key; "GPU-..." for NVIDIA.
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;
  bool up = true;      // False when the device is lost or unreadable this tick.
  std::string status;  // Why it is down, or which capabilities are missing.

  std::optional<double> utilization_ratio;         // Kernel running (NVML "gpu").
  std::optional<double> memory_utilization_ratio;  // Memory controller busy.
  std::optional<double> memory_used_bytes, memory_free_bytes, memory_total_bytes,
      memory_reserved_bytes;
  std::optional<double> power_watts;
  std::optional<double> energy_joules;  // Device counter (since driver load).
  std::optional<double> temperature_celsius, memory_temperature_celsius;
  std::optional<double> sm_clock_hz, memory_clock_hz;
  std::optional<uint64_t> clock_event_reasons;  // NVML bit mask.
  std::optional<double> pcie_tx_bytes_per_second, pcie_rx_bytes_per_second;
  std::optional<double> nvlink_tx_bytes_per_second, nvlink_rx_bytes_per_second;  // GPM totals.
  std::vector<NvLinkReading> nvlinks;
  std::optional<double> ecc_corrected_total, ecc_uncorrected_total;  // Volatile counts.
  std::optional<double> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> row_remap_pending, row_remap_failure;
  double xid_errors_total = 0;
  std::optional<int> last_xid;
  std::optional<bool> mig_enabled;
  std::vector<MigInstance> mig_instances;
  GpuActivity activity;

  bool processes_known = false;  // False: process list unreadable (no accounting this tick).
  std::vector<GpuProcess> processes;
  // Simulated backend only: the job of each entry of `processes` (its pids do not exist).
  std::vector<JobLabels> simulated_jobs;
};

}  // namespace vigil
