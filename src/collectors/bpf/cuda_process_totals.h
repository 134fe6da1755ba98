// SPDX-License-Identifier: Apache-2.0
// The bpf_cuda collector's arithmetic, apart from the probes: snapshots of a snoop session
// (SessionSummary) folded into per-group series. Processes are grouped like proc_process does
// (labels comm plus the job labels of the pid's attribution, resolved once per pid) so PIDs stay
// out of labels. Counters stay monotonic when processes come and go: a process that leaves the
// snapshot keeps its last counts in its group; the device-memory gauge (per CUDA device) counts
// live processes only, and stays at 0 for a device a group used before. Not thread-safe (the
// collector's sequence owns it).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "metrics/metric.h"
#include "snoop/snoop_summary.h"

namespace vigil {

// The families, declared once for the collector's row and the writer.
inline constexpr MetricDesc kCudaLaunches{
    "vigil_process_cuda_launches_total",
    "CUDA kernel launches (runtime and driver API) of the group's "
    "processes, traced with eBPF.",
    MetricKind::kCounter, ""};
inline constexpr MetricDesc kCudaSyncSeconds{"vigil_process_cuda_sync_seconds_total",
                                             "Time the group's threads spent blocked in CUDA "
                                             "synchronisation calls, per API.",
                                             MetricKind::kCounter, "seconds"};
inline constexpr MetricDesc kCudaDeviceMemory{
    "vigil_process_cuda_device_memory_bytes",
    "Device memory the group's live processes hold through the "
    "CUDA driver, allocated since tracing began, per device.",
    MetricKind::kGauge, "bytes"};
inline constexpr MetricDesc kCudaCopyBytes{
    "vigil_process_cuda_copy_bytes_total",
    "Bytes the group's processes copied with cudaMemcpy*/cuMemcpy*, "
    "per direction.",
    MetricKind::kCounter, "bytes"};

class CudaProcessTotals {
 public:
  // Labels of a process: its comm and attribution ({"comm", ...}, {"job_id", ...}); sorted.
  using LabelFn = std::function<Labels(int pid, const std::string& comm)>;

  explicit CudaProcessTotals(LabelFn labels) : labels_(std::move(labels)) {}

  // Takes this tick's snapshot (every process of the session, exited ones included or not).
  void Update(const snoop::SessionSummary& summary);
  // One sample per group and family: launches, sync seconds per API, device bytes, copy bytes
  // per kind; groups and label values in sorted order.
  void Write(MetricWriter& out) const;

  size_t groups() const;

 private:
  struct Counts {
    double launches = 0;
    std::map<int, double> device_bytes;          // device -> (live processes only).
    std::map<std::string, double> sync_seconds;  // api ->
    std::map<std::string, double> copy_bytes;    // kind ->
  };
  struct Tracked {
    Labels labels;
    Counts counts;  // As of the last snapshot that had the pid.
  };

  static Counts CountsOf(const snoop::ProcessSummary& p);
  static void AddTo(const Counts& from, bool with_gauge, Counts* into);

  LabelFn labels_;
  std::map<int, Tracked> live_;       // pid -> in the latest snapshot.
  std::map<Labels, Counts> retired_;  // Processes no longer in the snapshot, per group.
};

}  // namespace vigil
