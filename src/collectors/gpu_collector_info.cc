// SPDX-License-Identifier: Apache-2.0
// The GPU collector's registration row: builds its backend from its options (the backend's own
// GpuBackendOptions) and its job lookup from the context's resolver.
// Kept apart from gpu_collector.cc so unit tests of the collector need no attribution library.
#include "attribution/job_resolver.h"
#include "collectors/collector_context.h"
#include "collectors/gpu_collector.h"
#include "collectors/gpu_metrics.h"
#include "gpu/gpu_backend.h"

namespace vigil {
namespace {

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  GpuCollectorConfig config;
  GpuBackendOptions backend = context.OptionsFor<GpuBackendOptions>();
  if (backend.backend.empty()) {
    backend.backend = "auto";
  }
  config.make_backend = [backend] { return CreateGpuBackend(backend); };
#if VIGIL_HAVE_ATTRIBUTION
  if (std::shared_ptr<JobResolver> resolver = context.resolver) {
    config.resolve = [resolver](int pid) { return resolver->Resolve(pid); };
    config.resolve_on_device = [resolver](int pid, const std::vector<std::string>& devices) {
      return resolver->ResolveOnDevice(pid, devices);
    };
  }
#endif
  config.watch_list = context.watch_list;
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
