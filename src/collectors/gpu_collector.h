// SPDX-License-Identifier: Apache-2.0
// The GPU collector: reads every GPU through one backend (NVML+GPM, simulated; see src/gpu),
// derives the topline efficiency metrics (estimated FLOP/s, fraction of dense peak, HBM bandwidth
// used), and integrates per-GPU, per-job accounting over wall time between ticks (allocated, busy,
// held-idle seconds, energy). GPU-holding pids go to the watch list with reason "gpu" and are
// resolved to jobs by the attribution resolver. A backend that fails to initialise is retried
// every 30 s; a lost GPU is reported (vigil_gpu_up 0, non-OK status naming it) and read again on
// later ticks. Owner: collectors (GPU). Runs on the daemon's collector sequence; not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attribution/job_info.h"
#include "base/status.h"
#include "collectors/collector.h"
#include "collectors/watch_list.h"
#include "gpu/gpu_accounting.h"
#include "gpu/gpu_backend.h"

namespace vigil {

struct GpuCollectorConfig {
  // Creates the backend; called again after a failure (every retry_init_ns).
  std::function<StatusOr<std::unique_ptr<GpuBackend>>()> make_backend;
  // pid -> job; empty: no attribution (rule "unresolved").
  std::function<StatusOr<JobInfo>(int pid)> resolve;
  // pid on a GPU -> job, with the GPU's device ids (UUID, index) for the Kubernetes pod that
  // holds it; used instead of `resolve` when set.
  std::function<StatusOr<JobInfo>(int pid, const std::vector<std::string>& device_ids)>
      resolve_on_device;
  std::shared_ptr<WatchList> watch_list;  // May be null.
  std::function<int64_t()> monotonic_ns;  // Default: MonotonicNanos.
  std::function<int64_t()> unix_ns;       // Default: UnixNanos.
  int64_t retry_init_ns = 30'000'000'000;
};

class GpuCollector : public Collector {
 public:
  static const CollectorInfo kInfo;  // "gpu_devices"; defined in gpu_collector_info.cc.

  explicit GpuCollector(GpuCollectorConfig config);
  Status Collect(MetricWriter& out) override;

  // The backend's description, or why there is none (for `vigil status`).
  std::string Describe() const;

 private:
  Status EnsureBackend();
  JobLabels ResolveJob(const GpuReading& r, size_t process_index);
  void EmitDevice(const GpuReading& r, const Labels& base, MetricWriter& out);
  void EmitEfficiency(const GpuReading& r, const Labels& base, MetricWriter& out);

  GpuCollectorConfig config_;
  std::unique_ptr<GpuBackend> backend_;
  Status init_status_;
  int64_t next_init_ns_ = 0;
  std::vector<GpuReading> readings_;
  GpuAccountant accountant_;
  std::map<std::string, Labels> gpu_labels_;  // uuid -> base labels, for counters of absent GPUs.
};

}  // namespace vigil
