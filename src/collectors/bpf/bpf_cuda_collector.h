// SPDX-License-Identifier: Apache-2.0
// bpf_cuda: always-on CUDA API metrics from eBPF uprobes (the probes of `vigil snoop`) on every
// process that maps libcudart or libcuda, or has a static cudart: kernel launches, time blocked
// in synchronisation per API, device memory held and bytes copied per direction, per (comm, job)
// group (cuda_process_totals.h). Off by default (--collector.bpf_cuda). The snoop session starts
// on the first Collect and follows new processes as they appear (each Collect polls it, so a new
// process is traced within one interval). Absent, with the reason, when the daemon lacks root or
// CAP_BPF + CAP_PERFMON (PermissionDenied) or no process maps a CUDA library (NotFound). Its CPU
// cost is the daemon's: the session has no thread of its own, so vigil_collector_cpu_seconds_total
// {collector="bpf_cuda"} counts all of it on the user side. Runs on the collector sequence.
#pragma once

#include <memory>

#include "collectors/bpf/cuda_process_totals.h"
#include "collectors/collector.h"
#include "collectors/collector_context.h"

namespace vigil {

namespace snoop {
class SnoopSession;
}

class BpfCudaCollector : public Collector {
 public:
  static const CollectorInfo kInfo;

  explicit BpfCudaCollector(const CollectorContext& context);
  ~BpfCudaCollector() override;  // Detaches the probes.
  Status Collect(MetricWriter& out) override;

 private:
  Labels LabelsOf(int pid, const std::string& comm);

  CollectorContext context_;
  std::unique_ptr<snoop::SnoopSession> session_;
  CudaProcessTotals totals_;
};

}  // namespace vigil
