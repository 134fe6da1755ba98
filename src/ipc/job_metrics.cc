// SPDX-License-Identifier: Apache-2.0
#include "ipc/job_metrics.h"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace vigil {

Status ValidateStepReport(const StepReport& r, double peak_flops) {
  if (r.steps <= 0 || r.steps > kMaxStepsPerReport) {
    return InvalidArgumentError(
        fmt::format("step report needs 1 to {} steps, got {}", kMaxStepsPerReport, r.steps));
  }
  const double step_time = r.step_seconds / static_cast<double>(r.steps);
  if (!std::isfinite(r.step_seconds) || !(step_time > 0) || step_time > kMaxStepSeconds) {
    return InvalidArgumentError(fmt::format(
        "step report needs a mean step time above 0 and at most {} s", kMaxStepSeconds));
  }
  if (!std::isfinite(r.model_flops) || r.model_flops < 0 || r.model_flops > kMaxModelFlopsPerStep) {
    return InvalidArgumentError(fmt::format("step report needs model FLOPs per step from 0 to {:g}",
                                            kMaxModelFlopsPerStep));
  }
  if (!std::isfinite(peak_flops) || peak_flops < 0 || peak_flops > kMaxPeakFlops) {
    return InvalidArgumentError(
        fmt::format("declared peak FLOP/s must be from 0 to {:g}", kMaxPeakFlops));
  }
  if (peak_flops > 0 && r.model_flops / step_time > peak_flops) {
    return InvalidArgumentError("step report claims more FLOP/s than the declared peak (MFU > 1)");
  }
  if (static_cast<double>(r.input_bytes) > kMaxInputBytesPerReport) {
    return InvalidArgumentError("step report claims more than 1 PiB of input");
  }
  return OkStatus();
}

JobMetrics::JobMetrics(IpcClock clock, int64_t stale_ns)
    : clock_(std::move(clock)), stale_ns_(stale_ns) {}

Status JobMetrics::Record(const RegisteredProcess& process, const StepReport& r) {
  VIGIL_RETURN_IF_ERROR(ValidateStepReport(r, process.peak_flops));
  const std::string job = process.job_id.empty() ? "unknown" : process.job_id;
  std::lock_guard<std::mutex> lock(mu_);
  Job& j = jobs_[job];
  if (j.labels.empty()) {
    j.labels = {{"job_id", job}};
  }
  // A label, once set, stays: one process cannot relabel the job under the others.
  for (const auto& [key, value] : {std::pair<const char*, const std::string&>{"team", process.team},
                                   {"model", process.model},
                                   {"framework", process.framework}}) {
    if (!value.empty() && LabelValue(j.labels, key).empty()) {
      j.labels.emplace_back(key, value);
    }
  }
  ProcessWindow& w = j.window[process.host_pid];
  w.steps += r.steps;
  w.seconds += r.step_seconds;
  w.flops += r.model_flops * static_cast<double>(r.steps);
  w.bytes = r.input_bytes > std::numeric_limits<uint64_t>::max() - w.bytes
                ? std::numeric_limits<uint64_t>::max()
                : w.bytes + r.input_bytes;
  w.peak_flops = process.peak_flops;
  j.last_report_ns = clock_();
  return OkStatus();
}

Status JobMetrics::Collect(MetricWriter& out) {
  const int64_t now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& j = it->second;
    if (now - j.last_report_ns > stale_ns_) {
      it = jobs_.erase(it);
      continue;
    }
    if (!j.window.empty()) {
      int64_t steps = 0;
      double seconds = 0, flops = 0, achieved = 0, peak = 0;
      uint64_t bytes = 0;
      for (const auto& [pid, w] : j.window) {
        steps += w.steps;
        seconds += w.seconds;
        flops += w.flops;
        bytes += w.bytes;
        if (w.peak_flops > 0 && w.seconds > 0) {
          achieved += w.flops / w.seconds;
          peak += w.peak_flops;
        }
      }
      if (steps > 0) {
        j.step_seconds = seconds / static_cast<double>(steps);
        j.model_flops = flops / static_cast<double>(steps);
        j.mfu = peak > 0 ? achieved / peak : -1;
        j.seconds_per_byte = bytes > 0 ? seconds / static_cast<double>(bytes) : -1;
        j.have_values = true;
      }
      j.window.clear();
    }
    if (j.have_values) {
      out.Add(kJobStepSeconds, j.step_seconds, j.labels);
      out.Add(kJobModelFlops, j.model_flops, j.labels);
      if (j.mfu >= 0) {
        out.Add(kJobMfuRatio, j.mfu, j.labels);
      }
      if (j.seconds_per_byte >= 0) {
        out.Add(kJobDeviceSecondsPerInputByte, j.seconds_per_byte, j.labels);
      }
    }
    ++it;
  }
  return OkStatus();
}

}  // namespace vigil
