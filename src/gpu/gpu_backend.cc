// SPDX-License-Identifier: Apache-2.0
#include "gpu/gpu_backend.h"

#include "base/time_util.h"
#include "gpu/dcgm_backend.h"
#include "gpu/nvml_backend.h"
#include "gpu/rocm_smi_backend.h"
#include "gpu/sim_backend.h"

namespace vigil {
namespace {

StatusOr<std::unique_ptr<GpuBackend>> CreateNvml(const GpuBackendOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<NvmlLibrary> lib, LoadNvml(options.nvml_library));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<NvmlBackend> backend, NvmlBackend::Create(std::move(lib)));
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

StatusOr<std::unique_ptr<GpuBackend>> CreateAmd(const GpuBackendOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<RocmSmiBackend> backend,
                         RocmSmiBackend::Create(options.amd_library));
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace

StatusOr<std::unique_ptr<GpuBackend>> CreateGpuBackend(const GpuBackendOptions& options) {
  const std::string& b = options.backend;
  if (b == "nvml") return CreateNvml(options);
  if (b == "sim") {
    return std::unique_ptr<GpuBackend>(
        std::make_unique<SimBackend>(options.sim_gpus, [] { return MonotonicNanos(); }));
  }
  if (b == "none") return NotFoundError("GPU collection disabled (--gpu-backend none)");
  if (b == "dcgm") {
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<GpuBackend> nvml, CreateNvml(options));
    DcgmOptions dcgm;
    dcgm.so_path = options.dcgm_library;
    dcgm.address = options.dcgm_address;
    dcgm.embedded = options.dcgm_embedded;
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<DcgmBackend> backend,
                           DcgmBackend::Create(std::move(nvml), dcgm));
    return std::unique_ptr<GpuBackend>(std::move(backend));
  }
  if (b == "amd") return CreateAmd(options);
  if (b == "auto") {
    auto nvml = CreateNvml(options);
    if (nvml.ok()) return nvml;
    auto amd = CreateAmd(options);
    if (amd.ok()) return amd;
    return NotFoundError("no GPU library usable: " + nvml.status().message() + "; " +
                         amd.status().message());
  }
  return InvalidArgumentError("unknown --gpu-backend '" + b + "' (auto|nvml|dcgm|amd|sim|none)");
}

}  // namespace vigil
