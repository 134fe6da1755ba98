// SPDX-License-Identifier: Apache-2.0
// Per-job efficiency metrics from libvigil_client progress reports: mean step time, model FLOPs
// per step, model FLOPs utilisation (achieved model FLOP/s over the declared peak of the
// reporting processes) and device-seconds per input byte (one device per reporting process).
// Record() is called from the IPC receive thread; Collect() from the daemon's scheduler, like a
// collector's (it writes samples through MetricWriter and knows nothing of sinks). Values of a
// job are kept until it has not reported for `stale_ns`. Reports come from the job's processes,
// which may lie: a report outside the bounds below is refused whole, so a job's metrics are
// always finite and its MFU at most 1. Owner: ipc. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "base/status.h"
#include "ipc/process_registry.h"
#include "metrics/ipc_families.h"
#include "metrics/metric.h"

namespace vigil {

struct StepReport {          // libvigil_client's "vigil.step".
  int64_t steps = 1;         // Steps covered by this report.
  double step_seconds = 0;   // Total wall time of those steps.
  uint64_t input_bytes = 0;  // Input bytes consumed during them.
  double model_flops = 0;    // Model FLOPs per step (as the application computes them).
};

// What a step report may say. Refused: no steps or more than kMaxStepsPerReport; a mean step
// time that is not above 0 or is above a day; model FLOPs per step that are negative, above
// 1e21 (three orders of magnitude above any model trained today) or that, over the step time,
// exceed the process's declared peak FLOP/s (MFU above 1); a declared peak that is negative or
// above 1e18 FLOP/s; input bytes above 1 PiB per report; anything not finite.
inline constexpr int64_t kMaxStepsPerReport = 1000000;
inline constexpr double kMaxStepSeconds = 86400;
inline constexpr double kMaxModelFlopsPerStep = 1e21;
inline constexpr double kMaxPeakFlops = 1e18;
inline constexpr double kMaxInputBytesPerReport = 1125899906842624.0;  // 1 PiB.

// InvalidArgument, naming the bound, when the report or the process's declared peak break one.
Status ValidateStepReport(const StepReport& report, double peak_flops);

class JobMetrics {
 public:
  JobMetrics(IpcClock clock, int64_t stale_ns = int64_t{300} * 1000000000);

  // InvalidArgument (nothing recorded) when ValidateStepReport refuses the report.
  Status Record(const RegisteredProcess& process, const StepReport& report);
  // Writes the four families for every job that reported recently.
  Status Collect(MetricWriter& out);

 private:
  struct ProcessWindow {
    int64_t steps = 0;
    double seconds = 0;
    double flops = 0;  // Sum over steps.
    uint64_t bytes = 0;
    double peak_flops = 0;
  };
  struct Job {
    Labels labels;
    std::map<int32_t, ProcessWindow> window;  // By host pid, since the last Collect().
    int64_t last_report_ns = 0;
    bool have_values = false;
    double step_seconds = 0, model_flops = 0, mfu = -1, seconds_per_byte = -1;
  };

  IpcClock clock_;
  int64_t stale_ns_;
  std::mutex mu_;
  std::map<std::string, Job> jobs_;
};

}  // namespace vigil
