// SPDX-License-Identifier: Apache-2.0
#include "collectors/ipc_fabric_collector.h"

#include <utility>

#include "collectors/collector_context.h"
#include "metrics/ipc_families.h"

namespace vigil {
namespace {

constexpr const MetricDesc* kMetrics[] = {
    &kIpcDatagrams,   &kIpcDropped,    &kIpcReplies,  &kIpcProcesses,
    &kJobStepSeconds, &kJobModelFlops, &kJobMfuRatio, &kJobDeviceSecondsPerInputByte};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<IpcFabricCollector>(context.OptionsFor<IpcFabricCollectorOptions>());
}

}  // namespace

const CollectorInfo IpcFabricCollector::kInfo = {
    .name = "ipc_fabric",
    .help = "IPC fabric traffic, registered processes, and the job metrics applications report.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

IpcFabricCollector::IpcFabricCollector(IpcFabricCollectorOptions options)
    : options_(std::move(options)) {}

Status IpcFabricCollector::Collect(MetricWriter& out) {
  if (!options_.collect) {
    return NotFoundError("no IPC fabric runs in this process (vigild --once)");
  }
  return options_.collect(out);
}

}  // namespace vigil
