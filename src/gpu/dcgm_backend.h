// SPDX-License-Identifier: Apache-2.0
// The DCGM backend: NVML for device telemetry and processes (an NvmlBackend inside), plus DCGM's
// profiling fields 1001-1015 (SM active/occupancy, tensor/HMMA/IMMA/DFMA/FP64/FP32/FP16 pipes,
// DRAM active, PCIe/NVLink bytes) keyed by numeric field id, for GPUs where NVML has no GPM
// (Volta, Ampere). libdcgm.so.4 is dlopen'd; it connects to a running nv-hostengine first
// (127.0.0.1:5555) and starts an embedded engine only when asked. While GPU profiling is paused
// (profiling_control.h) it calls dcgmProfPause, and dcgmProfResume afterwards, so Nsight can take
// the counters. The ABI (dcgmFieldValue_v1 = 4120 bytes, uintptr_t handles, DCGM_GROUP_ALL_GPUS)
// is declared in the .cc from DCGM's public headers (dcgm_structs.h and the API header). Owner:
// gpu. Read() runs on the collector's sequence.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/dl_library.h"
#include "gpu/gpu_backend.h"

namespace vigil {

struct DcgmOptions {
  std::string so_path;  // "" = libdcgm.so.4
  std::string address = "127.0.0.1:5555";
  bool embedded = false;  // Start an embedded host engine if none answers.
};

class DcgmBackend : public GpuBackend {
 public:
  static StatusOr<std::unique_ptr<DcgmBackend>> Create(std::unique_ptr<GpuBackend> nvml,
                                                       const DcgmOptions& options);
  ~DcgmBackend() override;

  std::string_view name() const override { return "dcgm"; }
  Status Read(std::vector<GpuReading>* out) override;
  std::string Describe() const override;

  struct Api;  // Defined in the .cc.

 private:
  DcgmBackend() = default;
  void Overlay(GpuReading* r);

  std::unique_ptr<GpuBackend> nvml_;
  std::unique_ptr<Api> api_;
  DlLibrary library_;
  uintptr_t handle_ = 0;
  uintptr_t field_group_ = 0;
  bool embedded_ = false;
  bool paused_ = false;
  std::map<std::string, unsigned> gpu_ids_;  // uuid -> DCGM gpu id.
  std::string status_;
};

}  // namespace vigil
