// SPDX-License-Identifier: Apache-2.0
// ipc_fabric: the daemon's IPC fabric as metrics: datagrams, drops and replies, registered
// processes, and the job metrics (step time, model FLOPs, MFU, device-seconds per input byte)
// applications report over it. The fabric lives in src/ipc, which collectors cannot see, so the
// daemon hands its reader in through IpcFabricCollectorOptions; without one (vigild --once, a
// tool) the collector is absent. The families are declared in metrics/ipc_families.h.
#pragma once

#include <functional>

#include "collectors/collector.h"

namespace vigil {

struct IpcFabricCollectorOptions {
  // Writes the fabric's and the reported jobs' samples; thread-safe. Null: no fabric runs.
  std::function<Status(MetricWriter&)> collect;
};

class IpcFabricCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit IpcFabricCollector(IpcFabricCollectorOptions options);
  Status Collect(MetricWriter& out) override;

 private:
  IpcFabricCollectorOptions options_;
};

}  // namespace vigil
