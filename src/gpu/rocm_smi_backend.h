// SPDX-License-Identifier: Apache-2.0
// The AMD backend over ROCm SMI (librocm_smi64.so, dlopen'd like NVML): utilisation, memory
// activity, VRAM used/total, power, the energy counter, temperatures (edge, memory), SM ("sys")
// and memory clocks, and the compute processes holding each GPU. ROCm SMI exposes no pipe
// activity, so no FLOP/s estimate is made for AMD GPUs (measures_pipes() is false; status and
// docs say so). The ABI is declared in the .cc from rocm_smi.h: rsmi_frequencies_t grew a leading
// `bool has_deep_sleep` and a 33rd slot in library major version 6, so the layout is chosen from
// rsmi_version_get(). Owner: gpu. Read() runs on the collector's sequence.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/dl_library.h"
#include "gpu/gpu_backend.h"

namespace vigil {

class RocmSmiBackend : public GpuBackend {
 public:
  // Loads `library` ("" = librocm_smi64.so.7, .so.6, .so.5, .so in that order) and initialises.
  static StatusOr<std::unique_ptr<RocmSmiBackend>> Create(const std::string& library);
  ~RocmSmiBackend() override;

  std::string_view name() const override { return "amd"; }
  bool measures_pipes() const override { return false; }
  Status Read(std::vector<GpuReading>* out) override;
  std::string Describe() const override;

  struct Api;  // Function table, defined in the .cc.

 private:
  RocmSmiBackend() = default;
  std::unique_ptr<Api> api_;
  DlLibrary library_;
  unsigned version_major_ = 0;
  std::vector<std::string> uuids_, names_, pci_;
};

}  // namespace vigil
