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

// What `vigil status` shows for a library that failed: a library that is simply not installed says
// so in a few words (dlopen's own text repeats the name for every soname tried); one that loaded
// and failed keeps its whole reason.
std::string WhyNot(const Status& s, std::string_view library) {
  if (s.message().find("cannot open shared object file") != std::string::npos) {
    return std::string(library) + " not installed";
  }
  return s.message();
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
    return NotFoundError(
        "no GPU library usable: " +
        WhyNot(nvml.status(),
               options.nvml_library.empty() ? "NVML (libnvidia-ml.so.1)" : options.nvml_library) +
        "; " +
        WhyNot(amd.status(),
               options.amd_library.empty() ? "ROCm SMI (librocm_smi64.so)" : options.amd_library));
  }
  return InvalidArgumentError("unknown --gpu-backend '" + b + "' (auto|nvml|dcgm|amd|sim|none)");
}

}  // namespace vigil
