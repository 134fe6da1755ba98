// SPDX-License-Identifier: Apache-2.0
// Decoding NVML's running-process list when the entry size is not what the symbol promises.
// nvmlDeviceGetComputeRunningProcesses_v3 wrote 32-byte entries on R535-era drivers, 24 on
// earlier and later ones, and 16 on some; the plain symbol writes 16. The backend fills the buffer
// with a sentinel byte, calls the library, and ProbeProcessStride() picks the stride that explains
// what was written: entries must hold plausible pids and nothing may lie past count x stride.
// Owner: gpu. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace vigil {

inline constexpr uint8_t kProcessBufferSentinel = 0xA5;
inline constexpr size_t kMaxProcessInfoSize = 32;

struct GpuProcess {
  int pid = 0;
  uint64_t used_memory_bytes = 0;
  std::optional<unsigned> gpu_instance_id;  // MIG only (0xFFFFFFFF otherwise -> nullopt).
  std::optional<unsigned> compute_instance_id;
  // Share of the last sample period the process had kernels on the SMs (0-1), from
  // nvmlDeviceGetProcessUtilization; nullopt when the driver does not report it.
  std::optional<double> sm_ratio;
};

// Returns the entry stride (16, 24 or 32) that explains `buffer` holding `count` entries,
// trying `expected` first; nullopt when none does. `buffer` was filled with the sentinel before
// the call and is at least count x 32 bytes long.
std::optional<size_t> ProbeProcessStride(std::span<const uint8_t> buffer, unsigned count,
                                         size_t expected);

// Decodes `count` entries of `stride` bytes (fields at the offsets every layout shares:
// pid @0, usedGpuMemory @8, and for >= 24: gpuInstanceId @16, computeInstanceId @20).
std::vector<GpuProcess> DecodeProcesses(std::span<const uint8_t> buffer, unsigned count,
                                        size_t stride);

}  // namespace vigil
