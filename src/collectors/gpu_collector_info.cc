// SPDX-License-Identifier: Apache-2.0
// The GPU collector's registration row: builds its backend and job lookup from CollectorOptions.
// Kept apart from gpu_collector.cc so unit tests of the collector need no attribution library.
#include "attribution/job_resolver.h"
#include "collectors/collector_options.h"
#include "collectors/gpu_collector.h"
#include "collectors/gpu_metrics.h"

namespace vigil {
namespace {

std::unique_ptr<Collector> Create(const CollectorOptions& options) {
  GpuCollectorConfig config;
  GpuBackendOptions backend;
  backend.backend = options.gpu_backend.empty() ? "auto" : options.gpu_backend;
  backend.nvml_library = options.nvml_library;
  backend.dcgm_address = options.dcgm_address;
  backend.dcgm_embedded = options.dcgm_embedded;
  config.make_backend = [backend] { return CreateGpuBackend(backend); };
#if VIGIL_HAVE_ATTRIBUTION
  if (std::shared_ptr<JobResolver> resolver = options.resolver) {
    config.resolve = [resolver](int pid) { return resolver->Resolve(pid); };
    config.resolve_on_device = [resolver](int pid, const std::vector<std::string>& devices) {
      return resolver->ResolveOnDevice(pid, devices);
    };
  }
#endif
  config.watch_list = options.watch_list;
  return std::make_unique<GpuCollector>(std::move(config));
}

}  // namespace

const CollectorInfo GpuCollector::kInfo = {
    .name = "gpu_devices",
    .help =
        "GPU telemetry (NVML + GPM, or simulated), estimated FLOP/s and per-job GPU accounting.",
    .enabled_by_default = true,
    .metrics = gpu_metrics::kAll,
    .create = &Create,
};

}  // namespace vigil
