// SPDX-License-Identifier: Apache-2.0
// A source of GPU readings (NVML+GPM, DCGM, ROCm SMI, simulated). The GPU collector owns one and
// calls Read() once per tick from its sequence; backends that need a thread of their own (NVML's
// Xid event wait) own and join it. A backend that loaded keeps working when a device is lost: the
// device comes back with up=false and a reason, and is read again on later ticks. Owner: gpu.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gpu/gpu_reading.h"

namespace vigil {

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual std::string_view name() const = 0;  // "nvml", "dcgm", "amd", "sim"
  virtual bool simulated() const { return false; }
  // False when the backend can never measure pipe activity (AMD): no FLOP/s estimate then.
  virtual bool measures_pipes() const { return true; }
  // Replaces `out` with one reading per device. A non-OK status means the backend itself failed
  // (library gone); per-device problems are reported in the readings instead.
  virtual Status Read(std::vector<GpuReading>* out) = 0;
  // One line for `vigil status`: driver version, capabilities found and missing.
  virtual std::string Describe() const = 0;
};

struct GpuBackendOptions {
  std::string backend = "auto";  // auto|nvml|dcgm|amd|sim|none
  std::string nvml_library;      // "" = libnvidia-ml.so.1 by soname
  std::string amd_library;       // "" = librocm_smi64.so.(7|6|5|)
  std::string dcgm_library;      // "" = libdcgm.so.4
  std::string dcgm_address = "127.0.0.1:5555";
  bool dcgm_embedded = false;  // Start an embedded DCGM engine when no nv-hostengine answers.
  int sim_gpus = 8;
  uint64_t sim_seed = 1;
};

// Creates and initialises the backend `options.backend` names. "auto" tries NVML, then ROCm SMI,
// and returns NotFound when neither loads. "none" returns NotFound too. "dcgm" is NVML plus DCGM's
// profiling fields (auto never picks it: NVML + GPM covers Hopper and newer without a host engine).
StatusOr<std::unique_ptr<GpuBackend>> CreateGpuBackend(const GpuBackendOptions& options);

}  // namespace vigil
